import JOSE
import OpenSSLCrypto
import WireFormat

/// The account page's forms carry a token bound to the session (SPEC §4: forms protected
/// against CSRF), on top of the `SameSite=Lax` cookie and the `Origin` check: HMAC-SHA256 of
/// the session id under a key derived from `data_key`, so tokens survive restarts and cannot
/// be made without the key.
struct CSRFToken: Sendable {
    private let key: [UInt8]

    init(dataKey: [UInt8]) {
        key = HMACSHA256.mac(key: dataKey, message: Array("siwa-server csrf v1".utf8))
    }

    func token(for sessionID: String) -> String {
        Base64.url.encode(HMACSHA256.mac(key: key, message: Array(sessionID.utf8)))
    }

    /// Compares in constant time, so the token cannot be learned byte by byte.
    func isValid(_ candidate: String?, for sessionID: String) -> Bool {
        guard let candidate else { return false }
        return ConstantTime.equals(candidate.utf8, token(for: sessionID).utf8)
    }
}
