/// A message's words in one language, ready for `SMTP.MailMessage`.
public struct RenderedMail: Sendable, Equatable {
    public let subject: String
    public let text: String
    public let html: String
}
