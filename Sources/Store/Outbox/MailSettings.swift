/// How the Store writes mail (docs/guides/passwords-and-email.md), when `smtp_url` is set; without it, no message is
/// written and codes go by webhook.
public struct MailSettings: Sendable {
    /// The right-hand side of every Message-ID: the `email_from` domain.
    public let messageIDDomain: String
    /// Told of each message not written (to a relay address whose forwarding is off), for the
    /// log and `siwa_email_suppressed_total`. Called inside the change's transaction, so a
    /// change that then fails may have told it.
    public let suppressed: @Sendable (_ kind: String, _ reason: MailSuppression) -> Void

    public init(messageIDDomain: String, suppressed: @escaping @Sendable (_ kind: String, _ reason: MailSuppression) -> Void = { _, _ in }) {
        self.messageIDDomain = messageIDDomain
        self.suppressed = suppressed
    }
}
