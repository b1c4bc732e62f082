import JOSE
import JSON
import OpenSSLCrypto
import Store
import WireFormat

/// Access tokens for services that cannot call back (docs/guides/connecting-your-backend.md, RFC 9068): a short-lived JWT
/// saying who the session's user is, signed with the current key of `AccessTokenKeys`.
package struct AccessTokenIssuer: Sendable {
    package let keys: AccessTokenKeys
    /// `iss`: `public_url`.
    package let issuer: String
    /// `aud`: `access_token_audience`.
    package let audience: String
    /// `exp - iat`, seconds.
    package let ttl: Int64

    /// The claims of docs/guides/connecting-your-backend.md, in this order: `iss`, `sub` (the user id), `aud`, `iat`, `exp`,
    /// `jti`, `sid` (the session id), then `apple_sub` and `external_id` when the user has them.
    /// RFC 9068's `client_id` is not among them: a session belongs to no OAuth client (it was
    /// made by a sign-in, from any of the app's client ids), so there is nothing true to put in it.
    package func claims(user: UserRecord, session: SessionRecord, issuedAt: Int64, jti: String) -> JSONObject {
        var claims = JSONObject([
            ("iss", .string(issuer)), ("sub", .string(user.id)), ("aud", .string(audience)), ("iat", .integer(issuedAt)),
            ("exp", .integer(issuedAt + ttl)), ("jti", .string(jti)), ("sid", .string(session.id)),
        ])
        if let appleSub = user.appleSub { claims["apple_sub"] = .string(appleSub) }
        if let externalID = user.externalID { claims["external_id"] = .string(externalID) }
        return claims
    }

    /// A signed token for `user`'s `session`, issued at `now`.
    package func issue(user: UserRecord, session: SessionRecord, now: Int64) throws -> String {
        // 128 random bits: unique without coordination between instances.
        let jti = Base64.url.encode(SecureRandom.bytes(16))
        return try keys.minter(at: now).mint(claims(user: user, session: session, issuedAt: now, jti: jti))
    }

    package init(keys: AccessTokenKeys, issuer: String, audience: String, ttl: Int64) {
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.ttl = ttl
    }
}
