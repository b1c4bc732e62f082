import JOSE
import JSON
import OpenSSLCrypto

/// The RS256 keys published at `/auth/keys`, oldest first; the last one signs. Apple publishes
/// several keys with kids of different lengths (`W6WcOKB`, `Sf2lFqwkpX`, `YuyXoY`) and changes
/// the set over time, which breaks clients that take `keys[0]` or assume a kid length
/// (APPLE.md §4) — so the ring starts with two keys whose kids differ in length, and the
/// signing key is the last, not the first.
struct SigningKeyRing: Sendable {
    struct SigningKey: Sendable {
        let kid: String
        let key: RSAPrivateKey
        let pem: String
    }

    /// After a rotation the previous keys stay published for tokens already out; beyond this
    /// many the oldest is dropped.
    static let maximumPublished = 3
    private static let kidLengths = [7, 10, 6]

    private(set) var keys: [SigningKey]

    init(keys: [SigningKey]) {
        precondition(!keys.isEmpty, "a key ring holds at least one key")
        self.keys = keys
    }

    static func generate(_ makeSigningKey: () throws -> RSAPrivateKey) throws -> SigningKeyRing {
        var ring = SigningKeyRing(keys: [try makeKey(kidLength: kidLengths[0], avoiding: [], makeSigningKey)])
        try ring.rotate(makeSigningKey)
        return ring
    }

    var current: SigningKey { keys[keys.count - 1] }

    /// A new current key; the oldest is dropped once more than three are published.
    mutating func rotate(_ makeSigningKey: () throws -> RSAPrivateKey) throws {
        let length = Self.kidLengths[(kidLengthIndex + 1) % Self.kidLengths.count]
        keys.append(try Self.makeKey(kidLength: length, avoiding: Set(keys.map(\.kid)), makeSigningKey))
        if keys.count > Self.maximumPublished { keys.removeFirst(keys.count - Self.maximumPublished) }
    }

    private var kidLengthIndex: Int { Self.kidLengths.firstIndex(of: current.kid.count) ?? 0 }

    var document: JSONValue {
        .object(JSONObject([("keys", .array(keys.map { JSONWebKeySet.jwk(kid: $0.kid, key: $0.key.publicKey) }))]))
    }

    private static func makeKey(kidLength: Int, avoiding used: Set<String>, _ makeSigningKey: () throws -> RSAPrivateKey) throws -> SigningKey {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var kid: String
        repeat {
            kid = String(SecureRandom.bytes(kidLength).map { alphabet[Int($0) % alphabet.count] })
        } while used.contains(kid)
        let key = try makeSigningKey()
        return SigningKey(kid: kid, key: key, pem: try key.pem())
    }

    var json: JSONValue {
        .array(keys.map { .object(JSONObject([("kid", .string($0.kid)), ("pem", .string($0.pem))])) })
    }

    init?(json: JSONValue) {
        guard let entries = json.array, !entries.isEmpty else { return nil }
        var keys: [SigningKey] = []
        for entry in entries {
            guard let object = entry.object, let kid = object.text("kid"), let pem = object.text("pem"),
                  let key = try? RSAPrivateKey(pem: pem)
            else { return nil }
            keys.append(SigningKey(kid: kid, key: key, pem: pem))
        }
        self.init(keys: keys)
    }
}
