import JSON

/// A message the simulator's SMTP listener accepted, as the mailbox shows it: the envelope it
/// came with, where each recipient's copy went (a relay address to the person's own), and the
/// text a person reads, decoded from MIME.
public struct MailboxMessage: Sendable, Equatable {
    /// One `RCPT TO` and where the message landed for it.
    public struct Recipient: Sendable, Equatable {
        /// The address the sender named (a relay address, or any other).
        public let original: String
        /// The inbox it reached: the person's own address for a relay address, else `original`.
        public let deliveredTo: String
    }

    public let id: Int64
    /// Simulated time (Unix seconds) when the message was accepted.
    public let receivedAt: Int64
    /// `MAIL FROM`; empty for a bounce.
    public let mailFrom: String
    public let recipients: [Recipient]
    /// The `From`, `To` and `Subject` fields, RFC 2047 words decoded.
    public let from: String
    public let headerTo: String
    public let subject: String
    /// The `Date` field as sent.
    public let date: String?
    public let messageID: String?
    /// The first `text/plain` part (or a body that is not MIME), decoded.
    public let text: String
    /// The first `text/html` part, decoded.
    public let html: String
    /// The http(s) links of the text (of the HTML when there is no text), in order.
    public let links: [String]

    /// The inboxes it reached.
    public var to: [String] { recipients.map(\.deliveredTo) }

    /// Whether `address` (case-insensitive) is one it reached or was sent to.
    func isAddressed(to address: String) -> Bool {
        let lower = address.lowercased()
        return recipients.contains { $0.deliveredTo.lowercased() == lower || $0.original.lowercased() == lower }
    }

    /// Roughly what it holds in memory, for the mailbox's budget.
    var size: Int { text.utf8.count + html.utf8.count + subject.utf8.count + 512 }

    init(id: Int64, receivedAt: Int64, mailFrom: String, recipients: [Recipient], data: [UInt8]) {
        self.id = id
        self.receivedAt = receivedAt
        self.mailFrom = mailFrom
        self.recipients = recipients
        let message = MIMEEntity(parsing: data)
        from = EncodedWordDecoder.decode(message.field("From") ?? "")
        headerTo = EncodedWordDecoder.decode(message.field("To") ?? "")
        subject = EncodedWordDecoder.decode(message.field("Subject") ?? "")
        date = message.field("Date")
        messageID = message.field("Message-ID")
        var text: String?
        var html: String?
        Self.collect(message, depth: 0, text: &text, html: &html)
        self.text = text ?? ""
        self.html = html ?? ""
        links = MailLinks.find(in: text ?? html ?? "")
    }

    /// The first text and HTML parts, depth first (alternatives inside mixed, and so on).
    private static func collect(_ entity: MIMEEntity, depth: Int, text: inout String?, html: inout String?) {
        let type = entity.mediaType
        if type.hasPrefix("multipart/") {
            guard depth < MIMEEntity.maxDepth else { return }
            for part in entity.parts() { collect(part, depth: depth + 1, text: &text, html: &html) }
            return
        }
        guard type == "text/plain" || type == "text/html" else { return }
        let bytes = TransferDecoding.decode(entity.body, encoding: entity.field("Content-Transfer-Encoding"))
        // Lines end in LF, as a person's text editor and JSON readers expect.
        let decoded = TransferDecoding.text(bytes, charset: entity.contentTypeParameter("charset")).replacing("\r\n", with: "\n")
        if type == "text/plain", text == nil { text = decoded }
        if type == "text/html", html == nil { html = decoded }
    }

    var json: JSONValue {
        .object(.compact([
            ("id", .integer(id)), ("received_at", .integer(receivedAt)), ("from", .string(from)), ("to", .array(to.map { .string($0) })),
            ("header_to", .string(headerTo)), ("subject", .string(subject)), ("date", .optional(date)),
            ("message_id", .optional(messageID)), ("text", .string(text)), ("html", .string(html)),
            ("links", .array(links.map { .string($0) })),
            ("envelope", .object(JSONObject([
                ("mail_from", .string(mailFrom)),
                ("rcpt_to", .array(recipients.map { .string($0.original) })),
            ]))),
            ("relayed", .array(recipients.filter { $0.original != $0.deliveredTo }.map {
                .object(JSONObject([("relay_address", .string($0.original)), ("delivered_to", .string($0.deliveredTo))]))
            })),
        ]))
    }
}
