import Foundation

/// The server's USER: who is signed in, as `/api/me` and every sign-in answer it.
public struct User: Sendable, Hashable, Codable {
    public var id: String
    /// Apple's stable user identifier (the token's `sub`); nil for a password-only account.
    public var appleSub: String?
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    /// `enabled`, `disabled`, or nil without a private relay address.
    public var emailForwarding: String?
    /// `unsupported`, `unknown` or `likely_real`.
    public var realUserStatus: String?
    public var name: PersonName?
    /// `authorized`, `revoked`, or nil without an Apple ID.
    public var appleCredential: String?
    public var externalId: String?
    /// `apple`, `password`: the ways this user can sign in.
    public var signInMethods: [String]?
    /// `en` or `ko`, on servers that keep a language per user.
    public var locale: String?
    public var createdAt: Date
    public var updatedAt: Date
}
