/// The answer to `DELETE /api/account`: the account is gone; Apple's tokens are revoked now
/// (`done`) or by the server's durable queue later (`pending`).
public struct AccountDeletion: Sendable, Hashable, Codable {
    public var status: String
    public var appleRevocation: String
}
