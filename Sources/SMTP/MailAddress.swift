import WireFormat

/// An email address as it goes into `MAIL FROM`, `RCPT TO` and the `From` and `To` headers,
/// with an optional display name (a person's name, RFC 2047-encoded when it is not plain
/// ASCII). The address is checked; the name has its control characters (CR and LF among them)
/// made spaces, so it can never end a header.
public struct MailAddress: Sendable, Equatable, CustomStringConvertible {
    /// `local@domain`, ASCII.
    public let address: String
    /// Trimmed, without control characters; nil when none or empty.
    public let displayName: String?

    public init(_ address: String, displayName: String? = nil) throws(MailMessageError) {
        guard Self.isAddress(address) else { throw .invalidAddress }
        self.address = address
        let name = displayName.map { String(PrintableText.oneLine($0).trimmingWhitespaceAndNewlines()) }
        self.displayName = name?.isEmpty == false ? name : nil
    }

    /// `Name <address@domain>`, `"Name" <address@domain>` or `address@domain` (the form of
    /// `email_from`). Text with a control character is refused rather than cleaned: it comes
    /// from configuration, where it is a mistake.
    public init(parsing text: String) throws(MailMessageError) {
        guard !text.unicodeScalars.contains(where: PrintableText.isControl) else { throw .invalidAddressText }
        let trimmed = text.trimmingWhitespaceAndNewlines()
        guard trimmed.hasSuffix(">") else {
            try self.init(String(trimmed))
            return
        }
        guard let open = trimmed.lastIndex(of: "<") else { throw .invalidAddressText }
        let address = trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]
        var name = String(trimmed[..<open].trimmingWhitespaceAndNewlines())
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            name = Self.unquoted(name.dropFirst().dropLast())
        }
        guard !name.contains("<"), !name.contains(">") else { throw .invalidAddressText }
        try self.init(String(address), displayName: name)
    }

    /// `"Name" <address>` or `address`, for messages (not the header form: see `MailMessage`).
    public var description: String {
        displayName.map { "\"\($0)\" <\(address)>" } ?? address
    }

    /// RFC 5321 §4.1.2 `Mailbox` without quoted local parts or address literals, which no
    /// address this server mails needs and some servers mishandle.
    static func isAddress(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count <= 254, let at = bytes.lastIndex(of: UInt8(ascii: "@")) else { return false }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        guard !local.isEmpty, local.count <= 64, isDotAtom(local) else { return false }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return !domain.isEmpty
            && labels.allSatisfy { label in
                !label.isEmpty && label.count <= 63 && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                    && label.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
            }
    }

    /// RFC 5322 §3.2.3 dot-atom-text: atext runs joined by single dots.
    static func isDotAtom(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy { run in
            !run.isEmpty && run.allSatisfy(isAtext)
        }
    }

    /// RFC 5322 §3.2.3 atext.
    static func isAtext(_ byte: UInt8) -> Bool {
        isLetterOrDigit(byte) || Array("!#$%&'*+-/=?^_`{|}~".utf8).contains(byte)
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// A quoted string's content with its `\` escapes undone.
    private static func unquoted(_ text: Substring) -> String {
        var result = ""
        var escaped = false
        for character in text {
            if !escaped, character == "\\" {
                escaped = true
                continue
            }
            escaped = false
            result.append(character)
        }
        return result
    }
}
