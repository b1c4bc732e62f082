import Foundation

/// Unpadded base64url (RFC 4648 §5), the alphabet of JWTs, nonces and PKCE verifiers.
enum Base64URL {
    static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: some StringProtocol) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard)
    }

    /// `count` random bytes from the system's generator, encoded.
    static func random(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return encode((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
