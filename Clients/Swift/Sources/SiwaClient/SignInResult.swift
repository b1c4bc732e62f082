import Foundation

/// What every sign-in answers: the new session (kept in the store by the client) and the user.
public struct SignInResult: Sendable, Hashable, Codable {
    public struct Session: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The bearer token: a secret, kept only in the session store.
        public var token: String
        public var expiresAt: Date

        /// Without the token: a result printed to a log does not give it away.
        public var description: String { "Session(expiresAt: \(expiresAt), token: <redacted>)" }
        public var debugDescription: String { description }
    }

    public var session: Session
    public var user: User
    /// The user was created by this sign-in.
    public var created: Bool
}
