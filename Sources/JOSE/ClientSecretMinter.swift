import JSON
import OpenSSLCrypto
import Synchronization

/// Mints the ES256 client secret JWT Apple requires on `auth/token` and `auth/revoke`
/// (APPLE.md §5): `kid` header; `iss` team, `sub` client id, `aud` Apple; raw R||S signature.
/// One secret per client id is cached and replaced at half its lifetime, well before Apple
/// would refuse it.
public final class ClientSecretMinter: Sendable {
    /// Apple refuses `exp` more than 15,777,000 s after `iat`.
    public static let appleMaximumLifetime: Int64 = 15_777_000
    public static let defaultLifetime: Int64 = 24 * 3600

    private let teamID: String
    private let keyID: String
    private let key: P256PrivateKey
    private let lifetime: Int64
    private let cache = Mutex<[String: (secret: String, issuedAt: Int64)]>([:])

    public init(teamID: String, keyID: String, key: P256PrivateKey, lifetime: Int64 = ClientSecretMinter.defaultLifetime) {
        precondition(lifetime > 0 && lifetime <= Self.appleMaximumLifetime, "client secret lifetime out of Apple's range")
        self.teamID = teamID
        self.keyID = keyID
        self.key = key
        self.lifetime = lifetime
    }

    /// A secret for `clientID`, valid for at least half the lifetime from `now`.
    public func secret(for clientID: String, now: Int64) throws -> String {
        if let cached = cache.withLock({ $0[clientID] }), now >= cached.issuedAt, now - cached.issuedAt < lifetime / 2 {
            return cached.secret
        }
        let secret = try mint(for: clientID, now: now)
        cache.withLock { $0[clientID] = (secret, now) }
        return secret
    }

    /// A fresh secret, bypassing the cache (`client-secret` command).
    public func mint(for clientID: String, now: Int64) throws -> String {
        // Issued a little in the past so a server whose clock runs behind Apple's still works.
        let issuedAt = now - 60
        let header = JSONObject([("alg", .string("ES256")), ("kid", .string(keyID))])
        let claims = JSONObject([
            ("iss", .string(teamID)), ("iat", .integer(issuedAt)), ("exp", .integer(issuedAt + lifetime)),
            ("aud", .string(TokenVerifier.appleIssuer)), ("sub", .string(clientID)),
        ])
        return try CompactJWS.signES256(header: header, payload: claims, key: key)
    }
}
