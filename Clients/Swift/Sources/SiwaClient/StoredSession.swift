import Foundation

/// The session a store keeps: the bearer token and who it belongs to.
public struct StoredSession: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A secret: the store must keep it where only this app can read it.
    public var token: String
    public var expiresAt: Date
    public var userID: String
    /// The Apple ID whose credential state is checked at launch; nil for a password-only user.
    public var appleUserID: String?

    public init(token: String, expiresAt: Date, userID: String, appleUserID: String?) {
        self.token = token
        self.expiresAt = expiresAt
        self.userID = userID
        self.appleUserID = appleUserID
    }

    /// Without the token: a session printed to a log does not give it away.
    public var description: String { "StoredSession(userID: \(userID), expiresAt: \(expiresAt), token: <redacted>)" }
    public var debugDescription: String { description }
}
