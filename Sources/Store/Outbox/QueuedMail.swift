/// A message taken from the mail outbox for delivery: what the templates need and what the
/// retry rules need.
public struct QueuedMail: Sendable, Equatable {
    public let id: String
    /// nil for a message that belongs to no user.
    public let userID: String?
    /// `verify_email`, … (docs/guides/passwords-and-email.md); kept as text, so a message written by a newer build is
    /// still listed as it is.
    public let kind: String
    public let recipient: String
    /// `en` or `ko`: the user's language when the message was written.
    public let language: String
    /// The same on every attempt.
    public let messageID: String
    /// The template's values (opened when sealed).
    public let values: [String: String]
    /// When its change committed (Unix seconds); `email_retention` counts from here.
    public let createdAt: Int64
    /// Attempts that failed so far.
    public let attempts: Int

    public init(
        id: String, userID: String?, kind: String, recipient: String, language: String, messageID: String, values: [String: String],
        createdAt: Int64, attempts: Int
    ) {
        self.id = id
        self.userID = userID
        self.kind = kind
        self.recipient = recipient
        self.language = language
        self.messageID = messageID
        self.values = values
        self.createdAt = createdAt
        self.attempts = attempts
    }
}
