import JSON
import OpenSSLCrypto
import WireFormat

/// The one set of rules for everything Apple signs — identity tokens from phones and from the
/// web callback, the `id_token` of a code exchange, and server-to-server notifications — in
/// docs/reference/http-api.md's order, the first failure naming the reason. Sign-in, notifications and
/// `verify-token` all call this.
public enum TokenVerifier {
    public static let appleIssuer = "https://appleid.apple.com"
    /// Clock skew tolerated on `exp` and `iat`, in seconds.
    public static let leeway: Int64 = 60

    public enum Kind: Sendable {
        /// From a phone or the web callback: nonce and `c_hash` rules apply.
        case identityToken
        /// The `id_token` of a code exchange: signature, `iss`, `aud`, `exp`, `sub`; no nonce.
        case exchangedToken
        /// `exp` only when present; `jti` and `events` required.
        case notification
    }

    public enum NonceCheck: Sendable {
        /// `verify-token` without `--nonce`.
        case notChecked
        /// `expected` is the raw nonce the client sent (nil when it sent none).
        case check(expected: String?, requireNonce: Bool)
    }

    public struct Policy: Sendable {
        public var kind: Kind
        /// nil: the audience is not checked (`verify-token` with no audience configured).
        public var audiences: Set<String>?
        public var nonce: NonceCheck
        /// When given and the token has `c_hash`, the code must hash to it.
        public var authorizationCode: String?

        public init(kind: Kind, audiences: Set<String>?, nonce: NonceCheck = .notChecked, authorizationCode: String? = nil) {
            self.kind = kind
            self.audiences = audiences
            self.nonce = nonce
            self.authorizationCode = authorizationCode
        }
    }

    /// How the token's `nonce` related to the raw nonce: clients differ (APPLE.md §6).
    public enum NonceForm: String, Sendable {
        case raw
        case sha256Hex = "sha256_hex"
        case sha256Base64URL = "sha256_base64url"
    }

    public struct Verified: Sendable {
        public let claims: AppleClaims
        public let header: JSONObject
        public let payload: JSONObject
        public let keyID: String
        /// nil when the nonce was not checked or the token had none (and none was required).
        public let nonceForm: NonceForm?
    }

    /// - Parameters:
    ///   - keys: looks a `kid` up in Apple's current key set.
    ///   - now: seconds since 1970; tests and `verify-token --now` hold the clock.
    public static func verify(
        _ token: String, keys: (String) -> RSAPublicKey?, policy: Policy, now: Int64
    ) throws(TokenFailure) -> Verified {
        // The policy stays out of the closure, which would otherwise take a copy of it (its
        // set and strings retained and released) for every token.
        let (header, payload, kid) = try CompactJWS.withParts(of: token) {
            header, payload, signature, signingInput throws(TokenFailure) -> (JSONObject, JSONObject, String) in
            // `crit` names extensions a verifier must understand; this one understands none.
            if header["crit"] != nil { throw .malformed }
            // Only RS256: `none`, HS256 keyed with the public key and every other algorithm are
            // refused before any key is touched. `jku`, `jwk`, `x5u` and `x5c` are never read.
            guard header["alg"]?.string == "RS256" else { throw .unsupportedAlgorithm }
            guard let kid = header["kid"]?.string, !kid.isEmpty, let key = keys(kid) else { throw .unknownKey }
            guard key.verifyRS256(signature: signature, message: signingInput) else { throw .badSignature }
            return (header, payload, kid)
        }
        return try checkClaims(header: header, payload: payload, keyID: kid, policy: policy, now: now)
    }

    /// The claim rules, once the signature is good.
    private static func checkClaims(
        header: JSONObject, payload: JSONObject, keyID kid: String, policy: Policy, now: Int64
    ) throws(TokenFailure) -> Verified {
        // Notifications carry the subject inside each event, not at the top (APPLE.md §7).
        let claims = try AppleClaims(payload, requireSubject: policy.kind != .notification)
        guard claims.issuer == appleIssuer else { throw .wrongIssuer }
        if let audiences = policy.audiences {
            // Every audience must be ours (docs/reference/http-api.md): a token also meant for another party is
            // not a token for us alone.
            guard !claims.audiences.isEmpty, claims.audiences.allSatisfy(audiences.contains) else { throw .wrongAudience }
        }
        switch (policy.kind, claims.expiresAt) {
        case (.notification, nil): break
        case (_, nil): throw .malformed
        case (_, let expiresAt?):
            // Claims are bounded when read; checked anyway, since a crash here is one request
            // taking the whole process down.
            let (deadline, overflow) = expiresAt.addingReportingOverflow(leeway)
            if overflow { throw .malformed }
            if now >= deadline { throw .expired }
        }
        // `now` comes from the caller (`verify-token --now`): compare without adding to it.
        if claims.issuedAt - leeway > now { throw .issuedInFuture }

        var nonceForm: NonceForm?
        if policy.kind == .identityToken, case .check(let expected, let requireNonce) = policy.nonce {
            if let claimed = claims.nonce {
                guard let expected, !expected.isEmpty else { throw .nonceMissing }
                guard let form = matchNonce(claimed: claimed, raw: expected) else { throw .nonceMismatch }
                nonceForm = form
            } else if requireNonce || (claims.nonceSupported && !(expected ?? "").isEmpty) {
                // Apple: with `nonce_supported`, a nonce the client sent must come back. With
                // `require_nonce` off and no nonce sent, there is nothing to compare (docs/reference/http-api.md).
                throw .nonceMissing
            }
        }
        if policy.kind == .identityToken, let codeHash = claims.codeHash, let code = policy.authorizationCode {
            guard codeHashMatches(codeHash, code: code) else { throw .codeMismatch }
        }
        if policy.kind == .notification {
            guard let jti = claims.tokenID, !jti.isEmpty, claims.events != nil else { throw .malformed }
        }
        return Verified(claims: claims, header: header, payload: payload, keyID: kid, nonceForm: nonceForm)
    }

    /// The raw nonce, its lower-case hex SHA-256, or its base64url SHA-256.
    static func matchNonce(claimed: String, raw: String) -> NonceForm? {
        if constantTimeEquals(claimed, raw) { return .raw }
        let digest = SHA256.hash(raw)
        if constantTimeEquals(claimed, Hex.encode(digest)) { return .sha256Hex }
        if constantTimeEquals(claimed, Base64.url.encode(digest)) { return .sha256Base64URL }
        return nil
    }

    /// OIDC `c_hash`: base64url of the left half of SHA-256 of the code.
    public static func codeHash(_ code: String) -> String {
        withCodeHashBytes(code) { Base64.url.encode($0) }
    }

    /// Whether `claimed` is, byte for byte, `codeHash(code)`. Strict base64url gives every byte
    /// string one spelling, so decoding the claim and comparing bytes is that test, without
    /// making a string for every token verified. (Bytes, not Swift's `==`, to which U+212A
    /// KELVIN SIGN is a K: no other text passes for Apple's ASCII.)
    package static func codeHashMatches(_ claimed: String, code: String) -> Bool {
        var claimed = claimed
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { decoded in
            // Anything but 22 characters decodes to another length, or not at all.
            guard claimed.withUTF8({ Base64.url.decode($0, into: decoded) }) == 16 else { return false }
            return withCodeHashBytes(code) { $0.elementsEqual(decoded) }
        }
    }

    /// Lends `body` the 16 bytes `c_hash` encodes: the left half of SHA-256 of the code.
    private static func withCodeHashBytes<R>(_ code: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var code = code
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: SHA256.byteCount) { digest in
            code.withUTF8 { SHA256.hash(UnsafeRawBufferPointer($0), into: UnsafeMutableRawBufferPointer(digest)) }
            return body(UnsafeBufferPointer(rebasing: digest[..<16]))
        }
    }

    /// Compares without an early exit, so timing does not reveal how much of a guess matched.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        ConstantTime.equals(a, b)
    }
}
