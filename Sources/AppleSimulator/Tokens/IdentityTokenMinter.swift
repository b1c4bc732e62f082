import JOSE
import JSON

/// Signs id_tokens as Apple does (APPLE.md §6): RS256 with the current key and its `kid`, the
/// booleans `email_verified`/`is_private_email` as the strings `"true"`/`"false"` while
/// `nonce_supported` is a real boolean, and a lifetime that depends on where the token is
/// handed out.
struct IdentityTokenMinter: Sendable {
    enum Flavor: Sendable {
        /// What a phone gets from `ASAuthorizationAppleIDCredential`: ten minutes, `c_hash`,
        /// `real_user_status`.
        case native(code: String)
        /// Next to a code in the authorize endpoint's `form_post`: a day, `c_hash`.
        case authorize(code: String)
        /// From a code exchange at `/auth/token`: a day, `at_hash`.
        case exchange(accessToken: String)
        /// From a refresh grant: like an exchange, without `auth_time` (APPLE.md §2.2, field).
        case refresh(accessToken: String)
    }

    struct Subject: Sendable {
        var sub: String
        var clientID: String
        var email: String?
        var isPrivateEmail: Bool
        var nonce: String?
        var authTime: Int64
        /// Within 60 days of the app's transfer, for the people it moved (APPLE.md §6, §8).
        var transferSub: String? = nil
    }

    static let issuer = "https://appleid.apple.com"

    func claims(for subject: Subject, flavor: Flavor, now: Int64) -> JSONObject {
        let lifetime: Int64 = if case .native = flavor { 600 } else { 86_400 }
        var claims = JSONObject([
            ("iss", .string(Self.issuer)), ("aud", .string(subject.clientID)), ("exp", .integer(now + lifetime)),
            ("iat", .integer(now)), ("sub", .string(subject.sub)),
        ])
        switch flavor {
        case .refresh: break
        default: if let nonce = subject.nonce { claims["nonce"] = .string(nonce) }
        }
        switch flavor {
        case .native(let code), .authorize(let code): claims["c_hash"] = .string(TokenVerifier.codeHash(code))
        case .exchange(let accessToken), .refresh(let accessToken): claims["at_hash"] = .string(TokenVerifier.codeHash(accessToken))
        }
        if let email = subject.email {
            claims["email"] = .string(email)
            claims["email_verified"] = .string("true")
            claims["is_private_email"] = .string(subject.isPrivateEmail ? "true" : "false")
        }
        if case .refresh = flavor {} else { claims["auth_time"] = .integer(subject.authTime) }
        if let transferSub = subject.transferSub { claims["transfer_sub"] = .string(transferSub) }
        claims["nonce_supported"] = .bool(true)
        // Only native sign-in on recent OS versions reports it (APPLE.md §6); 2 is LikelyReal.
        if case .native = flavor { claims["real_user_status"] = .integer(2) }
        return claims
    }

    func mint(for subject: Subject, flavor: Flavor, now: Int64, key: SigningKeyRing.SigningKey) throws -> String {
        let header = JSONObject([("kid", .string(key.kid)), ("alg", .string("RS256"))])
        return try CompactJWS.signRS256(header: header, payload: claims(for: subject, flavor: flavor, now: now), key: key.key)
    }
}
