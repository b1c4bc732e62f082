import WireFormat

/// A message as siwa-server sends it (docs/guides/passwords-and-email.md): MIME `multipart/alternative` with a
/// `text/plain` and a `text/html` part, both UTF-8, and the headers `From`, `To`, `Subject`,
/// `Date`, `Message-ID` and `MIME-Version`.
///
/// Nothing from input reaches a header unchecked: addresses and the Message-ID are validated
/// when the message is made, names and the subject have their control characters made spaces,
/// and text that is not plain ASCII is RFC 2047-encoded. The same values always render the
/// same bytes, so a message retried is the message first tried.
public struct MailMessage: Sendable, Equatable {
    public let from: MailAddress
    public let to: [MailAddress]
    /// Trimmed, without control characters.
    public let subject: String
    public let text: String
    public let html: String
    /// Without angle brackets; the caller keeps it across retries, so a message delivered
    /// twice is recognisably one.
    public let messageID: String
    /// Seconds since the Unix epoch, for the `Date` header.
    public let date: Int64

    /// Separates the parts: `=_` appears in no quoted-printable or base64 text.
    static let boundary = "=_siwa-alternative"

    /// - Parameter messageID: `left@right` (or `<left@right>`).
    public init(
        from: MailAddress, to: [MailAddress], subject: String, text: String, html: String, messageID: String, date: Int64
    ) throws(MailMessageError) {
        guard !to.isEmpty else { throw .noRecipient }
        let bare = messageID.hasPrefix("<") && messageID.hasSuffix(">") && messageID.count >= 2
            ? String(messageID.dropFirst().dropLast()) : messageID
        guard Self.isMessageID(bare) else { throw .invalidMessageID }
        self.from = from
        self.to = to
        self.subject = String(PrintableText.oneLine(subject).trimming(while: { $0 == " " }))
        self.text = text
        self.html = html
        self.messageID = bare
        self.date = date
    }

    /// The message in RFC 5322 form, lines ended by CRLF, none over 998 octets.
    public func rendered() -> [UInt8] {
        var output: [UInt8] = []
        output += Self.addressField("From", [from])
        output += Self.addressField("To", to)
        var subjectField = HeaderField("Subject")
        subjectField.append(contentsOf: Self.subjectWords(subject))
        output += subjectField.rendered
        output += Array("Date: \(MessageDate.format(date))\r\n".utf8)
        output += Array("Message-ID: <\(messageID)>\r\n".utf8)
        output += Array("MIME-Version: 1.0\r\n".utf8)
        output += Array("Content-Type: multipart/alternative; boundary=\"\(Self.boundary)\"\r\n".utf8)
        output += [0x0D, 0x0A]
        for part in [MIMETextPart(subtype: "plain", text: text), MIMETextPart(subtype: "html", text: html)] {
            output += Array("--\(Self.boundary)\r\n".utf8)
            output += Array("Content-Type: \(part.contentType)\r\n".utf8)
            output += Array("Content-Transfer-Encoding: \(part.transferEncoding.rawValue)\r\n\r\n".utf8)
            // The CRLF before the next boundary belongs to the boundary (RFC 2046 §5.1.1).
            output += part.body + [0x0D, 0x0A]
        }
        output += Array("--\(Self.boundary)--\r\n".utf8)
        return output
    }

    /// `Name <address>, Name <address>`: each name as plain words when it is only atext
    /// words, else as encoded-words (which also covers ASCII punctuation, without the quoting
    /// rules of RFC 5322 phrases).
    private static func addressField(_ name: String, _ addresses: [MailAddress]) -> [UInt8] {
        var field = HeaderField(name)
        for (index, mailbox) in addresses.enumerated() {
            let separator = index < addresses.count - 1 ? "," : ""
            if let displayName = mailbox.displayName {
                field.append(contentsOf: phraseWords(displayName))
                field.append("<\(mailbox.address)>\(separator)")
            } else {
                field.append("\(mailbox.address)\(separator)")
            }
        }
        return field.rendered
    }

    private static func phraseWords(_ name: String) -> [String] {
        let words = name.split(separator: " ").map(String.init)
        let plain = words.allSatisfy { word in
            word.utf8.count <= 64 && !word.contains("=?") && word.utf8.allSatisfy(MailAddress.isAtext)
        }
        return plain ? words : EncodedWord.encode(name)
    }

    /// Printable ASCII words as they are; anything else, or text that could be taken for an
    /// encoded-word, or a word too long to fold, as encoded-words.
    private static func subjectWords(_ subject: String) -> [String] {
        let words = subject.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        let plain = !subject.contains("=?")
            && words.allSatisfy { word in word.utf8.count <= 64 && word.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E } }
        if subject.isEmpty { return [] }
        return plain ? words : EncodedWord.encode(subject)
    }

    /// RFC 5322 §3.6.4 `msg-id` content, dot-atom on both sides.
    private static func isMessageID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count <= 250, let at = bytes.firstIndex(of: UInt8(ascii: "@")) else { return false }
        return MailAddress.isDotAtom(bytes[..<at]) && MailAddress.isDotAtom(bytes[(at + 1)...])
    }
}
