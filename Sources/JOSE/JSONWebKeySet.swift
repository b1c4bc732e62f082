import JSON
import OpenSSLCrypto
import WireFormat

/// Apple's signing keys (`GET /auth/keys`), looked up by `kid` only: never by position, since
/// the set's size and order change (APPLE.md §4).
public struct JSONWebKeySet: Sendable {
    public let keys: [String: RSAPublicKey]
    /// The document as fetched, kept so the last good copy can be persisted verbatim.
    public let document: [UInt8]

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let reason: String
        public var description: String { "JWKS: \(reason)" }
    }

    /// Reads `{"keys":[…]}`, keeping the RSA signing keys usable with RS256. Entries for other
    /// algorithms or uses are skipped; a set with no usable key is invalid.
    public init(json document: [UInt8]) throws(Invalid) {
        guard let root = try? JSONParser.parse(document).object, let entries = root["keys"]?.array else {
            throw Invalid(reason: "not an object with a \"keys\" array")
        }
        var keys: [String: RSAPublicKey] = [:]
        for entry in entries {
            guard let jwk = entry.object, jwk["kty"]?.string == "RSA", let kid = jwk["kid"]?.string, !kid.isEmpty else { continue }
            if let use = jwk["use"]?.string, use != "sig" { continue }
            if let alg = jwk["alg"]?.string, alg != "RS256" { continue }
            guard let n = jwk["n"]?.string.flatMap(Base64.url.decode), let e = jwk["e"]?.string.flatMap(Base64.url.decode),
                  let key = try? RSAPublicKey(modulus: n, exponent: e)
            else { continue }
            // A kid listed twice is ambiguous; trust neither copy.
            if keys[kid] != nil { throw Invalid(reason: "kid \(kid.prefix(40)) appears twice") }
            keys[kid] = key
        }
        guard !keys.isEmpty else { throw Invalid(reason: "no usable RS256 key") }
        self.keys = keys
        self.document = document
    }

    public subscript(kid: String) -> RSAPublicKey? { keys[kid] }

    /// The public JWK of an RSA key, as Apple publishes it.
    public static func jwk(kid: String, key: RSAPublicKey) -> JSONValue {
        .object(JSONObject([
            ("kty", .string("RSA")), ("kid", .string(kid)), ("use", .string("sig")), ("alg", .string("RS256")),
            ("n", .string(Base64.url.encode(key.modulus))), ("e", .string(Base64.url.encode(key.exponent))),
        ]))
    }
}
