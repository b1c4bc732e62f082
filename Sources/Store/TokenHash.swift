import OpenSSLCrypto
import WireFormat

/// A session token's SHA-256, as the session caches' key and the `token_hash` column's value.
/// Four words rather than an array: it is made, hashed and compared on every authenticated
/// request, with no allocation. The digest is uniformly distributed, so its first word hashes
/// it as well as all four would.
struct TokenHash: Hashable, Sendable, ExpressibleByArrayLiteral {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    /// Short keys for tests: up to 32 bytes, zero-padded.
    init(arrayLiteral bytes: UInt8...) {
        withUnsafeMutableBytes(of: &words) { storage in
            for (index, byte) in bytes.prefix(SHA256.byteCount).enumerated() { storage[index] = byte }
        }
    }

    /// The hash of the bytes `token` spells in base64url, or nil unless it spells exactly
    /// `decodedCount` of them. Decoded on the stack, hashed in place.
    init?(token: Substring, decodedCount: Int) {
        var token = token
        let hashed = token.withUTF8 { text -> Bool in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: decodedCount) { decoded in
                // Refused when the text spells more bytes than the buffer holds; fewer, by the count.
                guard Base64.url.decode(text, into: decoded) == decodedCount else { return false }
                withUnsafeMutableBytes(of: &words) { SHA256.hash(UnsafeRawBufferPointer(decoded), into: $0) }
                return true
            }
        }
        guard hashed else { return nil }
    }

    /// The column's value.
    var bytes: [UInt8] { withUnsafeBytes(of: words) { Array($0) } }

    static func == (a: TokenHash, b: TokenHash) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    func hash(into hasher: inout Hasher) { hasher.combine(words.0) }
}
