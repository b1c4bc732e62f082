import Foundation

/// What every sign-in answers: the new session (kept in the store by the client) and the user.
public struct SignInResult: Sendable, Hashable, Codable {
    public struct Session: Sendable, Hashable, Codable {
        /// The bearer token: a secret, kept only in the session store.
        public var token: String
        public var expiresAt: Date
    }

    public var session: Session
    public var user: User
    /// The user was created by this sign-in.
    public var created: Bool
}
