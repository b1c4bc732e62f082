import Foundation

/// One entry of the user's own audit trail (`GET /api/account/activity`).
public struct ActivityEvent: Sendable, Hashable, Codable, Identifiable {
    public var id: String
    public var at: Date
    /// `sign_in.succeeded`, `session.ended`, `password.changed`, …
    public var type: String
    public var userId: String?
    public var sessionId: String?
    public var actor: String
    public var ip: String?
    public var userAgent: String?
    public var detail: JSONValue?
}
