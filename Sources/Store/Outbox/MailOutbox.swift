import JSON
import OpenSSLCrypto

/// The mail outbox (docs/guides/passwords-and-email.md): messages are written inside the transaction of the change that
/// causes them, so a change commits with its mail or not at all. Without settings (no
/// `smtp_url`) nothing is written. Only the template's values are kept, rendered at delivery;
/// the Message-ID is chosen here, so every attempt sends the same message.
struct MailOutbox: Sendable {
    let settings: MailSettings?
    /// Seals the values that hold a code (`OutboxBodySeal`).
    let cipher: AESGCM

    /// Whether mail is sent (`smtp_url` set).
    var isOn: Bool { settings != nil }

    /// Writes one `kind` message to `address` (nil: the user's email) in the user's language,
    /// due at once; `sealed` for values that hold a code. Not written (false) without
    /// settings, without an address, or to a relay address of the user while forwarding is
    /// not enabled (Apple would drop it; the suppression is reported).
    @discardableResult
    func enqueue(
        _ kind: String, to user: UserRecord, address: String? = nil, values: [String: String], sealed: Bool = false, now: Int64,
        in connection: any SQLConnection
    ) throws -> Bool {
        guard let settings, let recipient = address ?? user.email, !recipient.isEmpty else { return false }
        if user.isPrivateEmail, let email = user.email, EmailAddress.normalized(email) == EmailAddress.normalized(recipient),
           user.emailForwarding != .enabled {
            settings.suppressed(kind, .relayDisabled)
            try AuditTrail.record(
                .emailSuppressed, userID: user.id, detail: AuditTrail.detail(["kind": kind, "reason": "forwarding_disabled"]), context: .system,
                now: now, in: connection)
            return false
        }
        let id = RecordID.make(prefix: "mail_")
        let messageID = "\(id)@\(settings.messageIDDomain)"
        var body = JSONWriter.string(.object(JSONObject(values.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })))
        if sealed { body = try OutboxBodySeal.seal(body, id: id, table: .mail, with: cipher) }
        try connection.run(
            """
            INSERT INTO mail_messages(id, user_id, kind, recipient, language, message_id, body, created_at, next_attempt_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(id), .text(user.id), .text(kind), .text(recipient), .text(user.locale), .text(messageID), .text(body), .integer(now), .integer(now)])
        return true
    }

}
