/// A webhook event taken from the outbox for delivery: what is sent (the body, rendered when
/// its change committed) and what the retry rules need.
public struct WebhookEvent: Sendable, Equatable {
    /// `webhook-id`: the same on every attempt, so the receiver can drop a repeat.
    public let id: String
    public let userID: String
    /// `user.created`, … (docs/guides/connecting-your-backend.md); kept as text, so an event written by a newer build is still
    /// sent as it is.
    public let type: String
    public let body: String
    /// When its change committed (Unix seconds); `webhook_retention` counts from here.
    public let createdAt: Int64
    /// Attempts that failed so far.
    public let attempts: Int

    public init(id: String, userID: String, type: String, body: String, createdAt: Int64, attempts: Int) {
        self.id = id
        self.userID = userID
        self.type = type
        self.body = body
        self.createdAt = createdAt
        self.attempts = attempts
    }
}
