import Foundation

/// A nonce the server issued (single use, ten minutes): give it to Apple's request hashed
/// (`AppleNonce(raw:)`), and the raw value to `signIn`.
public struct ServerNonce: Sendable, Hashable, Codable {
    public var nonce: String
    public var expiresAt: Date
}
