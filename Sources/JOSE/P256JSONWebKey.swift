import JSON
import OpenSSLCrypto
import WireFormat

/// A P-256 public key as a JWK (RFC 7518 §6.2.1), for the access tokens' JWKS.
public struct P256JSONWebKey: Sendable, Equatable {
    /// The coordinates, base64url of 32 bytes each.
    public let x: String
    public let y: String

    /// From coordinates already in base64url.
    public init(x: String, y: String) {
        self.x = x
        self.y = y
    }

    public init(_ key: P256PublicKey) throws {
        let (x, y) = try key.coordinates()
        self.x = Base64.url.encode(x)
        self.y = Base64.url.encode(y)
    }

    /// The RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order with no
    /// whitespace, base64url. A kid derived from the key itself cannot name another key.
    public var thumbprint: String {
        Base64.url.encode(SHA256.hash(#"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#))
    }

    /// The key as a JWKS publishes an ES256 signing key.
    public func json(kid: String) -> JSONValue {
        .object(JSONObject([
            ("kty", .string("EC")), ("crv", .string("P-256")), ("x", .string(x)), ("y", .string(y)),
            ("alg", .string("ES256")), ("use", .string("sig")), ("kid", .string(kid)),
        ]))
    }
}
