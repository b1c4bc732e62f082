import TestSupport
import JSON
import OpenSSLCrypto
import Testing
import WireFormat
@testable import JOSE

/// Builds Apple-shaped tokens signed by a key the test controls.
struct TokenFactory {
    static let shared = try! TokenFactory()

    let key: RSAPrivateKey
    let otherKey: RSAPrivateKey
    let now: Int64 = 1_800_000_000

    init() throws {
        let keys = try TestSigningKeys.distinct(2)
        key = keys[0]
        otherKey = keys[1]
    }

    func keys(_ kid: String) -> RSAPublicKey? { kid == "KEY1" ? key.publicKey : nil }

    func claims(_ changes: [(String, JSONValue?)] = []) -> JSONObject {
        var claims = JSONObject([
            ("iss", .string("https://appleid.apple.com")), ("aud", .string("com.example.app")), ("exp", .integer(now + 600)),
            ("iat", .integer(now)), ("sub", .string("001234.0123456789abcdef0123456789abcdef.0123")),
            ("nonce", .string("raw-nonce")), ("c_hash", .string(TokenVerifier.codeHash("the-code"))),
            ("email", .string("x@privaterelay.appleid.com")), ("email_verified", .string("true")),
            ("is_private_email", .string("true")), ("auth_time", .integer(now)), ("nonce_supported", .bool(true)),
        ])
        for (name, value) in changes { claims[name] = value }
        return claims
    }

    func token(header: JSONObject = JSONObject([("kid", .string("KEY1")), ("alg", .string("RS256"))]), claims: JSONObject? = nil, signer: RSAPrivateKey? = nil) -> String {
        try! CompactJWS.signRS256(header: header, payload: claims ?? self.claims(), key: signer ?? key)
    }

    func verify(_ token: String, policy: TokenVerifier.Policy? = nil, now: Int64? = nil) throws(TokenFailure) -> TokenVerifier.Verified {
        try TokenVerifier.verify(
            token, keys: keys,
            policy: policy ?? .init(kind: .identityToken, audiences: ["com.example.app", "com.example.web"],
                                    nonce: .check(expected: "raw-nonce", requireNonce: true), authorizationCode: "the-code"),
            now: now ?? self.now)
    }

    func failure(_ token: String, policy: TokenVerifier.Policy? = nil, now: Int64? = nil) -> TokenFailure? {
        do {
            _ = try verify(token, policy: policy, now: now)
            return nil
        } catch {
            return error
        }
    }
}

@Suite struct TokenVerifierTests {
    let factory = TokenFactory.shared

    @Test func aGoodTokenVerifiesAndItsClaimsAreRead() throws {
        let verified = try factory.verify(factory.token())
        #expect(verified.claims.subject == "001234.0123456789abcdef0123456789abcdef.0123")
        #expect(verified.claims.emailVerified && verified.claims.isPrivateEmail)
        #expect(verified.claims.realUserStatus == .unsupported)
        #expect(verified.nonceForm == .raw)
        #expect(verified.keyID == "KEY1")
    }

    private func unsigned(_ header: String, _ claims: JSONObject, signature: [UInt8] = []) -> String {
        Base64.url.encode(header) + "." + Base64.url.encode(JSONWriter.bytes(.object(claims))) + "." + Base64.url.encode(signature)
    }

    @Test(arguments: ["", "a", "a.b", "a.b.c.d", "!!!.e30.AA", "e30.e30", "W10.e30.AA", "e30.W10.AA", "e30.e30.A", "eyJhbGciOiJSUzI1NiJ9=.e30.AA"])
    func nonTokensAreMalformed(_ text: String) {
        #expect(factory.failure(text) == .malformed)
    }

    @Test func oversizedTokensAreMalformed() {
        let huge = factory.token(claims: factory.claims([("padding", .string(String(repeating: "p", count: 17_000)))]))
        #expect(factory.failure(huge) == .malformed)
    }

    @Test func algNoneIsRefused() {
        let token = unsigned(#"{"alg":"none","kid":"KEY1"}"#, factory.claims())
        #expect(factory.failure(token) == .unsupportedAlgorithm)
    }

    @Test func hs256KeyedWithThePublicKeyIsRefused() throws {
        // The classic confusion attack: an HMAC over the token keyed with the RSA public key's
        // bytes, hoping the verifier feeds its RSA key to HMAC.
        let header = Base64.url.encode(#"{"alg":"HS256","kid":"KEY1"}"#)
        let payload = Base64.url.encode(JSONWriter.bytes(.object(factory.claims())))
        let keyBytes = Array(try factory.key.publicKey.pem().utf8)
        let mac = HMACSHA256.mac(key: keyBytes, message: Array("\(header).\(payload)".utf8))
        #expect(factory.failure("\(header).\(payload).\(Base64.url.encode(mac))") == .unsupportedAlgorithm)
    }

    @Test(arguments: ["RS384", "ES256", "PS256", "rs256"])
    func otherAlgorithmsAreRefused(_ alg: String) {
        let token = factory.token(header: JSONObject([("kid", .string("KEY1")), ("alg", .string(alg))]))
        #expect(factory.failure(token) == .unsupportedAlgorithm)
    }

    @Test func critIsRefused() {
        let token = factory.token(header: JSONObject([("kid", .string("KEY1")), ("alg", .string("RS256")), ("crit", .array([.string("exp")]))]))
        #expect(factory.failure(token) == .malformed)
    }

    @Test func anUnknownOrMissingKidIsUnknownKey() {
        #expect(factory.failure(factory.token(header: JSONObject([("kid", .string("NOPE")), ("alg", .string("RS256"))]))) == .unknownKey)
        #expect(factory.failure(factory.token(header: JSONObject([("alg", .string("RS256"))]))) == .unknownKey)
    }

    @Test func embeddedKeysInTheHeaderAreIgnored() {
        // A token signed by an attacker's key that also carries that key (`jwk`) or a URL to it.
        let attacker = factory.otherKey
        let header = JSONObject([
            ("kid", .string("KEY1")), ("alg", .string("RS256")),
            ("jwk", JSONWebKeySet.jwk(kid: "KEY1", key: attacker.publicKey)), ("jku", .string("https://evil.example/keys")),
        ])
        #expect(factory.failure(factory.token(header: header, signer: attacker)) == .badSignature)
    }

    @Test func aSignatureFromAnotherKeyOrAlteredClaimsIsBadSignature() {
        #expect(factory.failure(factory.token(signer: factory.otherKey)) == .badSignature)
        let parts = factory.token().split(separator: ".")
        let forged = JSONWriter.bytes(.object(factory.claims([("sub", .string("someone-else"))])))
        #expect(factory.failure("\(parts[0]).\(Base64.url.encode(forged)).\(parts[2])") == .badSignature)
    }

    @Test func theIssuerMustBeApple() {
        #expect(factory.failure(factory.token(claims: factory.claims([("iss", .string("https://appleid.apple.com/"))]))) == .wrongIssuer)
        #expect(factory.failure(factory.token(claims: factory.claims([("iss", nil)]))) == .wrongIssuer)
    }

    @Test func theAudienceMustBeOneOfOurs() throws {
        #expect(factory.failure(factory.token(claims: factory.claims([("aud", .string("com.attacker.app"))]))) == .wrongAudience)
        #expect(factory.failure(factory.token(claims: factory.claims([("aud", nil)]))) == .wrongAudience)
        _ = try factory.verify(factory.token(claims: factory.claims([("aud", .string("com.example.web"))])))
        let unchecked = TokenVerifier.Policy(kind: .identityToken, audiences: nil)
        _ = try factory.verify(factory.token(claims: factory.claims([("aud", .string("com.attacker.app"))])), policy: unchecked)
    }

    @Test func anAudienceArrayNamingAnyoneElseIsRefused() throws {
        // docs/reference/http-api.md: one of ours is not enough when the token is also meant for someone else.
        let shared = factory.claims([("aud", .array([.string("com.example.app"), .string("com.attacker.app")]))])
        #expect(factory.failure(factory.token(claims: shared)) == .wrongAudience)
        let odd = factory.claims([("aud", .array([.string("com.example.app"), .integer(1)]))])
        #expect(factory.failure(factory.token(claims: odd)) == .wrongAudience)
        _ = try factory.verify(factory.token(claims: factory.claims([("aud", .array([.string("com.example.app"), .string("com.example.web")]))])))
    }

    /// A signed `exp` near 2^63 once crashed the process when the leeway was added.
    @Test(arguments: ["exp", "iat", "auth_time", "nbf"], [Int64.max - 1, Int64.max, Int64.min, -1, AppleClaims.latestTime + 1])
    func absurdTimeClaimsAreMalformed(_ claim: String, _ value: Int64) {
        #expect(factory.failure(factory.token(claims: factory.claims([(claim, .integer(value))]))) == .malformed)
    }

    @Test func timeClaimsThatAreNotWholeSecondsAreMalformed() {
        #expect(factory.failure(factory.token(claims: factory.claims([("exp", .double(1e300))]))) == .malformed)
        #expect(factory.failure(factory.token(claims: factory.claims([("iat", .string("1800000000"))]))) == .malformed)
        #expect(factory.failure(factory.token(claims: factory.claims([("auth_time", .double(1.5))]))) == .malformed)
    }

    @Test func anAbsurdClockIsNoCrash() throws {
        // `verify-token --now` hands the clock in from outside.
        #expect(factory.failure(factory.token(), now: .max) == .expired)
        #expect(factory.failure(factory.token(), now: .min) == .issuedInFuture)
        let latest = factory.claims([("exp", .integer(AppleClaims.latestTime)), ("iat", .integer(AppleClaims.latestTime))])
        _ = try factory.verify(factory.token(claims: latest), now: AppleClaims.latestTime)
    }

    @Test func expiryHasSixtySecondsOfLeeway() throws {
        let token = factory.token(claims: factory.claims([("exp", .integer(factory.now))]))
        _ = try factory.verify(token, now: factory.now + 59)
        #expect(factory.failure(token, now: factory.now + 60) == .expired)
        #expect(factory.failure(factory.token(claims: factory.claims([("exp", nil)]))) == .malformed)
    }

    @Test func issuedInTheFutureHasSixtySecondsOfLeeway() throws {
        _ = try factory.verify(factory.token(claims: factory.claims([("iat", .integer(factory.now + 60))])))
        #expect(factory.failure(factory.token(claims: factory.claims([("iat", .integer(factory.now + 61))]))) == .issuedInFuture)
    }

    @Test func nonceMayBeRawHexOrBase64URLSHA256() throws {
        let digest = SHA256.hash("raw-nonce")
        let hexNonce = digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        #expect(try factory.verify(factory.token(claims: factory.claims([("nonce", .string(hexNonce))]))).nonceForm == .sha256Hex)
        #expect(try factory.verify(factory.token(claims: factory.claims([("nonce", .string(Base64.url.encode(digest)))]))).nonceForm == .sha256Base64URL)
        #expect(factory.failure(factory.token(claims: factory.claims([("nonce", .string(hexNonce.uppercased()))]))) == .nonceMismatch)
        #expect(factory.failure(factory.token(claims: factory.claims([("nonce", .string("other"))]))) == .nonceMismatch)
    }

    @Test func missingNoncesAreRefusedWhenRequiredOrSupported() throws {
        let noNonce = factory.token(claims: factory.claims([("nonce", nil), ("nonce_supported", .bool(false))]))
        #expect(factory.failure(noNonce) == .nonceMissing)
        let relaxed = TokenVerifier.Policy(kind: .identityToken, audiences: ["com.example.app"], nonce: .check(expected: nil, requireNonce: false))
        _ = try factory.verify(noNonce, policy: relaxed)
        // docs/reference/http-api.md: with require_nonce off and no nonce sent, `nonce_supported` changes nothing…
        let supported = factory.token(claims: factory.claims([("nonce", nil), ("nonce_supported", .bool(true))]))
        _ = try factory.verify(supported, policy: relaxed)
        // …but a nonce the client did send must come back in a token that supports nonces.
        let sent = TokenVerifier.Policy(kind: .identityToken, audiences: ["com.example.app"], nonce: .check(expected: "raw-nonce", requireNonce: false))
        #expect(factory.failure(supported, policy: sent) == .nonceMissing)
        _ = try factory.verify(noNonce, policy: sent)
        // The token has a nonce but the request gave none.
        #expect(factory.failure(factory.token(), policy: relaxed) == .nonceMissing)
    }

    @Test func cHashMustMatchTheCode() {
        let policy = TokenVerifier.Policy(
            kind: .identityToken, audiences: ["com.example.app"], nonce: .check(expected: "raw-nonce", requireNonce: true),
            authorizationCode: "another-code")
        #expect(factory.failure(factory.token(), policy: policy) == .codeMismatch)
    }

    @Test func checksRunInTheSpecifiedOrder() {
        // Wrong issuer, wrong audience and expired at once: the issuer is named first.
        let claims = factory.claims([("iss", .string("x")), ("aud", .string("y")), ("exp", .integer(1))])
        #expect(factory.failure(factory.token(claims: claims)) == .wrongIssuer)
        let later = factory.claims([("aud", .string("y")), ("exp", .integer(1)), ("iat", .integer(factory.now + 9999))])
        #expect(factory.failure(factory.token(claims: later)) == .wrongAudience)
    }

    /// Claims are found by name; names near the ones read (same length, a prefix, another
    /// case) are other claims and change nothing.
    @Test func claimsAreFoundByTheirExactNames() throws {
        let lookalikes = factory.claims([
            ("isx", .string("x")), ("Iss", .string("x")), ("nonc3", .string("x")), ("emai1", .string("x")), ("c_hasH", .string("x")),
            ("email_verifieD", .bool(false)), ("nonce_supporteD", .bool(false)), ("real_user_statuS", .integer(1)),
            ("is_private_emaiL", .bool(false)), ("auth_timE", .integer(-5)), ("transfer_suB", .string("t")), ("evento", .string("x")),
            ("nb", .integer(-1)), ("jti_", .integer(1)), ("real_user_status", .integer(1)), ("transfer_sub", .string("old.team.sub")),
        ])
        let verified = try factory.verify(factory.token(claims: lookalikes))
        let claims = verified.claims
        #expect(claims.issuer == TokenVerifier.appleIssuer && claims.audiences == ["com.example.app"])
        #expect(claims.subject == "001234.0123456789abcdef0123456789abcdef.0123" && claims.nonce == "raw-nonce")
        #expect(claims.email == "x@privaterelay.appleid.com" && claims.emailVerified && claims.isPrivateEmail && claims.nonceSupported)
        #expect(claims.realUserStatus == .unknown && claims.authTime == factory.now && claims.transferSubject == "old.team.sub")
        #expect(claims.codeHash == TokenVerifier.codeHash("the-code") && claims.tokenID == nil && claims.events == nil)
        #expect(verified.payload == lookalikes)
        #expect(verified.header == JSONObject([("kid", .string("KEY1")), ("alg", .string("RS256"))]))
    }

    /// OIDC's `c_hash` of known codes (Python: base64url(sha256(code)[:16]), unpadded).
    @Test func codeHashKnownAnswers() {
        #expect(TokenVerifier.codeHash("the-code") == "7DGrz5DFcFFtWOE5NDHy8Q")
        #expect(TokenVerifier.codeHash("") == "47DEQpj8HBSa-_TImW-5JA")
        #expect(TokenVerifier.codeHash("é") == "SplVfkAzw1Od4utlRyAXyg")
    }

    /// The check decodes the claim instead of encoding the digest, so only the one strict
    /// spelling of the code's hash matches: not one with stray low bits that a lenient decoder
    /// reads as the same bytes, a padded one, the standard alphabet, or a prefix.
    @Test func cHashMatchesOnlyItsOneSpelling() {
        #expect(TokenVerifier.codeHashMatches("7DGrz5DFcFFtWOE5NDHy8Q", code: "the-code"))
        #expect(TokenVerifier.codeHashMatches("47DEQpj8HBSa-_TImW-5JA", code: ""))
        #expect(!TokenVerifier.codeHashMatches("7DGrz5DFcFFtWOE5NDHy8R", code: "the-code"))
        #expect(!TokenVerifier.codeHashMatches("7DGrz5DFcFFtWOE5NDHy8Q==", code: "the-code"))
        #expect(!TokenVerifier.codeHashMatches("47DEQpj8HBSa+/TImW+5JA", code: ""))
        #expect(!TokenVerifier.codeHashMatches("7DGrz5DFcFFtWOE5NDHy8", code: "the-code"))
        #expect(!TokenVerifier.codeHashMatches("", code: "the-code"))
        #expect(!TokenVerifier.codeHashMatches("7DGrz5DFcFFtWOE5NDHy8Q", code: "the-codf"))
        // Text equal to the hash under Swift's `==` but not byte for byte.
        #expect(TokenVerifier.codeHashMatches("DKqIwlfXEiJo9klFOfrt9g", code: "code-2"))
        #expect("DKqIwlfXEiJo9klFOfrt9g" == "D\u{212A}qIwlfXEiJo9klFOfrt9g")
        #expect(!TokenVerifier.codeHashMatches("D\u{212A}qIwlfXEiJo9klFOfrt9g", code: "code-2"))
    }

    /// What `CompactJWS` hands out is the token's own parts, whatever path decoded them.
    @Test func theCompactFormKeepsTheSignedBytesAndTheSignature() throws {
        let token = factory.token()
        let parts = token.split(separator: ".")
        let jws = try CompactJWS(token)
        #expect(Array(jws.signingInput) == Array("\(parts[0]).\(parts[1])".utf8) && jws.signingInput.startIndex == 0)
        #expect(jws.signature == Base64.url.decode(String(parts[2])) && jws.signature.count == 256)
        #expect(jws.payload == factory.claims() && jws.algorithm == "RS256" && jws.keyID == "KEY1")
    }

    @Test func booleansAreReadInEveryFormAppleUses() throws {
        for (value, expected) in [(JSONValue.bool(true), true), (.string("true"), true), (.string("false"), false), (.bool(false), false)] {
            let verified = try factory.verify(factory.token(claims: factory.claims([("email_verified", value), ("is_private_email", value)])))
            #expect(verified.claims.emailVerified == expected && verified.claims.isPrivateEmail == expected)
        }
        let absent = try factory.verify(factory.token(claims: factory.claims([("email_verified", nil), ("is_private_email", nil)])))
        #expect(!absent.claims.emailVerified && !absent.claims.isPrivateEmail)
        let real = try factory.verify(factory.token(claims: factory.claims([("real_user_status", .integer(2))])))
        #expect(real.claims.realUserStatus == .likelyReal)
    }
}

@Suite struct NotificationVerificationTests {
    let factory = TokenFactory.shared
    let policy = TokenVerifier.Policy(kind: .notification, audiences: ["com.example.app"])

    func notification(events: JSONValue?, jti: JSONValue? = .string("uZmGepCUZyA_0by3Jh7JCQ"), exp: JSONValue? = nil) -> String {
        var claims = JSONObject([
            ("iss", .string("https://appleid.apple.com")), ("aud", .string("com.example.app")),
            ("iat", .integer(factory.now)),
        ])
        claims["jti"] = jti
        claims["events"] = events
        claims["exp"] = exp
        return factory.token(claims: claims)
    }

    @Test func eventsAreReadAsAStringAnObjectOrAnArray() throws {
        let event = #"{"type":"email-disabled","sub":"000148.f06d","event_time":1670016125295,"email":"a@privaterelay.appleid.com","is_private_email":"true"}"#
        let asString = try factory.verify(notification(events: .string(event)), policy: policy)
        #expect(asString.claims.events == [AppleEvent(type: "email-disabled", subject: "000148.f06d", eventTimeMilliseconds: 1_670_016_125_295, email: "a@privaterelay.appleid.com", isPrivateEmail: true)])
        let object = try JSONParser.parse(event)
        #expect(try factory.verify(notification(events: object), policy: policy).claims.events?.count == 1)
        #expect(try factory.verify(notification(events: .array([object, object])), policy: policy).claims.events?.count == 2)
    }

    @Test func aNotificationWithoutJtiOrEventsIsMalformed() {
        let event = JSONValue.string(#"{"type":"consent-revoked","sub":"s"}"#)
        #expect(factory.failure(notification(events: event, jti: nil), policy: policy) == .malformed)
        #expect(factory.failure(notification(events: nil), policy: policy) == .malformed)
        #expect(factory.failure(notification(events: .string("not json")), policy: policy) == .malformed)
        #expect(factory.failure(notification(events: .string(#"{"sub":"s"}"#)), policy: policy) == .malformed)
    }

    /// Found by the jws fuzz target: an empty `sub` or `type` was read as an event.
    @Test(arguments: [#"{"type":"email-disabled","sub":""}"#, #"{"type":"","sub":"000148.f06d"}"#,
                      #"[{"type":"consent-revoked","sub":"000148.f06d"},{"type":"account-delete","sub":""}]"#])
    func anEventWithAnEmptyTypeOrSubjectIsMalformed(events: String) {
        #expect(factory.failure(notification(events: .string(events)), policy: policy) == .malformed)
    }

    @Test(arguments: [Int64.max, Int64.min, -1, AppleClaims.latestTime * 1000 + 1])
    func anAbsurdEventTimeIsMalformed(_ milliseconds: Int64) {
        let event = JSONValue.string(#"{"type":"consent-revoked","sub":"s","event_time":\#(milliseconds)}"#)
        #expect(factory.failure(notification(events: event), policy: policy) == .malformed)
    }

    @Test func expIsCheckedOnlyWhenPresent() throws {
        let event = JSONValue.string(#"{"type":"consent-revoked","sub":"s"}"#)
        _ = try factory.verify(notification(events: event), policy: policy)
        #expect(factory.failure(notification(events: event, exp: .integer(factory.now - 100)), policy: policy) == .expired)
    }
}

@Suite struct ClientSecretTests {
    @Test func secretsHaveApplesShapeAndVerify() throws {
        let key = try P256PrivateKey.generate()
        let minter = ClientSecretMinter(teamID: "TEAM123456", keyID: "KEY1234567", key: key)
        let secret = try minter.secret(for: "com.example.web", now: 1_800_000_000)
        let jws = try CompactJWS(secret)
        #expect(jws.header == JSONObject([("alg", .string("ES256")), ("kid", .string("KEY1234567"))]))
        #expect(jws.payload["iss"]?.string == "TEAM123456")
        #expect(jws.payload["sub"]?.string == "com.example.web")
        #expect(jws.payload["aud"]?.string == "https://appleid.apple.com")
        let iat = try #require(jws.payload["iat"]?.integer), exp = try #require(jws.payload["exp"]?.integer)
        #expect(exp - iat <= ClientSecretMinter.appleMaximumLifetime)
        #expect(iat <= 1_800_000_000)
        #expect(jws.signature.count == 64)
        #expect(key.publicKey.verifyES256(signature: jws.signature, message: jws.signingInput))
    }

    @Test func secretsAreCachedPerClientAndRenewedAtHalfLife() throws {
        let minter = ClientSecretMinter(teamID: "TEAM123456", keyID: "KEY1234567", key: try P256PrivateKey.generate(), lifetime: 3600)
        let first = try minter.secret(for: "a", now: 1000)
        #expect(try minter.secret(for: "a", now: 1000 + 1799) == first)
        #expect(try minter.secret(for: "b", now: 1000) != first)
        #expect(try minter.secret(for: "a", now: 1000 + 1800) != first)
    }
}
