import Foundation

/// One of the user's live sessions, as `GET /api/sessions` lists them.
public struct SessionSummary: Sendable, Hashable, Codable, Identifiable {
    public var id: String
    public var createdAt: Date
    public var lastSeenAt: Date
    public var expiresAt: Date
    public var deviceName: String?
    /// It is this client's session.
    public var current: Bool
    /// How it was made (`apple`, `password`, …), on servers that record it.
    public var method: String?
}
