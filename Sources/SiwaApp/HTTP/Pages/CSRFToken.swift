import JOSE
import OpenSSLCrypto
import WireFormat

/// The account page's forms carry a token bound to the session (docs/reference/http-api.md: forms protected
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

    /// The token of the sign-in page's forms, before any session: bound to the browser's
    /// `siwa_form` cookie (a double-submit token a page elsewhere can neither read nor make).
    func formToken(for cookie: String) -> String {
        token(for: "form\u{0}" + cookie)
    }

    func isValidForm(_ candidate: String?, cookie: String?) -> Bool {
        guard let cookie, !cookie.isEmpty else { return false }
        return isValid(candidate, for: "form\u{0}" + cookie)
    }

    /// Compares in constant time, so the token cannot be learned byte by byte.
    func isValid(_ candidate: String?, for sessionID: String) -> Bool {
        guard let candidate else { return false }
        return ConstantTime.equals(candidate.utf8, token(for: sessionID).utf8)
    }
}
