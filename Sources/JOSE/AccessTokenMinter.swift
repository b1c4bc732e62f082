import JSON
import OpenSSLCrypto
import WireFormat

/// Signs access tokens as RFC 9068 shapes them: a JWS with header
/// `{"alg":"ES256","typ":"at+jwt","kid":…}` (§2.1; the `typ` keeps an access token from being
/// taken for an ID token) and a raw `R || S` signature. The claims are the caller's.
public struct AccessTokenMinter: Sendable {
    public let kid: String
    private let key: P256PrivateKey
    /// The header never changes for a key: encoded once.
    private let encodedHeader: String

    public init(kid: String, key: P256PrivateKey) {
        self.kid = kid
        self.key = key
        encodedHeader = Base64.url.encode(JSONWriter.bytes(.object(JSONObject([
            ("alg", .string("ES256")), ("typ", .string("at+jwt")), ("kid", .string(kid)),
        ]))))
    }

    public func mint(_ claims: JSONObject) throws -> String {
        let input = encodedHeader + "." + Base64.url.encode(JSONWriter.bytes(.object(claims)))
        return input + "." + Base64.url.encode(try key.signES256(Array(input.utf8)))
    }
}
