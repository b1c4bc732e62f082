import OpenSSLCrypto
import Store
import WireFormat

/// Returning a web sign-in to an app on another platform (docs/guides/connecting-your-backend.md): the app opens
/// `/auth/apple/login?return_to=APP_URL&code_challenge=C&code_challenge_method=S256`, the
/// callback answers 303 to `APP_URL` with a one-time `code`, and the app exchanges the code with
/// its PKCE verifier (RFC 7636). Any app can register any custom scheme (RFC 8252 §8.1), so the
/// code alone is worthless: only the app that made the challenge holds the verifier.
package enum AppReturn {
    /// A code lives a minute: the app exchanges it as soon as the system hands it the URL.
    package static let codeLifetime: Int64 = 60

    /// `text` when it is an app URL (`scheme:` then anything) whose scheme is allowed, else nil.
    package static func appURL(_ text: String, allowedSchemes: [String]) -> String? {
        guard !allowedSchemes.isEmpty, text.utf8.count <= 2048,
              !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || $0 == "\\" }),
              let colon = text.firstIndex(of: ":")
        else { return nil }
        return allowedSchemes.contains(text[..<colon].lowercased()) ? text : nil
    }

    /// An S256 challenge: base64url (no padding) of a SHA-256, so 43 characters.
    package static func isChallenge(_ text: String) -> Bool {
        text.utf8.count == 43 && Base64.url.decode(text)?.count == SHA256.byteCount
    }

    /// RFC 7636 §4.1: 43 to 128 unreserved characters.
    package static func isVerifier(_ text: String) -> Bool {
        (43...128).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
        }
    }

    /// Whether `verifier` is the one `challenge` was made from (S256), compared in constant time.
    package static func verifier(_ verifier: String, matches challenge: String) -> Bool {
        isVerifier(verifier) && ConstantTime.equals(Base64.url.encode(SHA256.hash(Array(verifier.utf8))).utf8, challenge.utf8)
    }

    /// A fresh code (256 bits, base64url) and the grant that stores only its hash.
    package static func newCode(challenge: String, now: Int64) -> (code: String, grant: AppReturnGrant) {
        let code = Base64.url.encode(SecureRandom.bytes(32))
        return (code, AppReturnGrant(codeHash: SHA256.hash(Array(code.utf8)), codeChallenge: challenge, expiresAt: now + codeLifetime))
    }

    /// `appURL` with `code=` added to its query (before any fragment).
    package static func url(_ appURL: String, adding code: String) -> String {
        var base = Substring(appURL)
        var fragment: Substring = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = base[hash...]
            base = base[..<hash]
        }
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + separator + "code=" + code + fragment
    }
}
