/// An event the receiver did not accept within `webhook_retention`, as `siwa-server webhooks
/// failed` lists it. No body: it holds the user's email, and the listing is for finding the
/// event, not reading it.
public struct FailedWebhookEvent: Sendable, Equatable {
    public let id: String
    public let type: String
    public let userID: String
    public let attempts: Int
    public let createdAt: Int64
    public let failedAt: Int64
    /// Why the last attempt failed (`HTTP 500`, `timed out`, …); never a secret or a body.
    public let lastError: String?

    public init(id: String, type: String, userID: String, attempts: Int, createdAt: Int64, failedAt: Int64, lastError: String?) {
        self.id = id
        self.type = type
        self.userID = userID
        self.attempts = attempts
        self.createdAt = createdAt
        self.failedAt = failedAt
        self.lastError = lastError
    }
}
