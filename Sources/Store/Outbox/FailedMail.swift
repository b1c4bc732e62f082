/// A message that was not accepted within `email_retention` (or was refused for good), as
/// `siwa-server email failed` lists it. No values: they may hold a code.
public struct FailedMail: Sendable, Equatable {
    public let id: String
    public let kind: String
    public let userID: String?
    public let recipient: String
    public let attempts: Int
    public let createdAt: Int64
    public let failedAt: Int64
    /// Why the last attempt failed (the SMTP step and reply code, or the connection error).
    public let lastError: String?

    public init(id: String, kind: String, userID: String?, recipient: String, attempts: Int, createdAt: Int64, failedAt: Int64, lastError: String?) {
        self.id = id
        self.kind = kind
        self.userID = userID
        self.recipient = recipient
        self.attempts = attempts
        self.createdAt = createdAt
        self.failedAt = failedAt
        self.lastError = lastError
    }
}
