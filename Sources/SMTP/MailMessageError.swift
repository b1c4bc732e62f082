/// Why a `MailAddress` or `MailMessage` cannot be made. Names what is wrong, never the text.
public enum MailMessageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not `local@domain` as this client sends it: ASCII, a dot-atom local part of at most 64
    /// octets, a domain of letters, digits and hyphens, at most 254 octets in all.
    case invalidAddress
    /// `Name <address>` with something other than the address after the name, or control
    /// characters.
    case invalidAddressText
    /// Not `<left@right>` (or the same without brackets) of printable ASCII, at most 250 octets.
    case invalidMessageID
    case noRecipient

    public var description: String {
        switch self {
        case .invalidAddress: "is not an email address (local@domain, ASCII)"
        case .invalidAddressText: "is not \"Name <address@domain>\" or \"address@domain\""
        case .invalidMessageID: "is not a Message-ID (left@right, printable ASCII)"
        case .noRecipient: "a message needs at least one recipient"
        }
    }
}
