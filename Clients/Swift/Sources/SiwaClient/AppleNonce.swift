/// A nonce for Apple's request: Apple puts `hashed` (the lower-case hex SHA-256 of `raw`, as
/// Apple's sample code does) into the identity token, and the server is given `raw` and checks
/// that the token holds its hash: a token lifted from another request does not match.
public struct AppleNonce: Sendable, Hashable {
    /// Sent to the server with the sign-in.
    public let raw: String
    /// Set as `ASAuthorizationAppleIDRequest.nonce`.
    public let hashed: String

    /// A fresh nonce of 256 random bits.
    public init() {
        self.init(raw: Base64URL.random(bytes: 32))
    }

    /// Hashes a nonce made elsewhere, e.g. the server's (`SiwaClient.serverNonce()`).
    public init(raw: String) {
        self.raw = raw
        hashed = SHA256.hex(Array(raw.utf8))
    }
}
