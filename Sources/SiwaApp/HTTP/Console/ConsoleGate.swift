import Accounts
import HTTPServer
import OpenSSLCrypto
import Store
import WireFormat

/// Who may use the console, and which of its forms are genuine (docs/guides/operating.md
/// "Console"): a sign-in with the admin token makes a console session held by the `siwa_console`
/// cookie (`SameSite=Strict`, scoped to `/console`, twelve hours); every form must come from this
/// site's `Origin` and carry the session's CSRF token.
struct ConsoleGate: Sendable {
    static let cookieName = "siwa_console"

    let sessions: ConsoleSessionStore
    let admin: AdminAuthenticator
    let csrf: CSRFToken
    let publicOrigin: String
    /// `trusted_proxies`, for the audit events' client address.
    let trustedProxies: CIDRSet
    let clock: @Sendable () -> Int64

    /// An operator's action through `request`: actor `admin`, its client address and user agent.
    func audit(_ request: HTTPRequest) -> AuditContext {
        AuditContext(request, trusted: trustedProxies, actor: .admin)
    }

    /// A live console session, and the token its forms carry.
    struct Signed: Sendable {
        let token: String
        let csrf: String
    }

    /// Why a console request is refused; each is a page (or, signed out, a 303 to the sign-in).
    enum Refusal: Error, Equatable {
        case signedOut, foreignOrigin, formExpired, unreadableForm, notFound

        var status: Int {
            switch self {
            case .signedOut: 303
            case .foreignOrigin, .formExpired: 403
            case .unreadableForm: 400
            case .notFound: 404
            }
        }

        var message: String {
            switch self {
            case .signedOut: "Sign in to the console."
            case .foreignOrigin: "This form was sent from another site; nothing changed."
            case .formExpired: "This form has expired (or did not come from the console); go back, reload and try again. Nothing changed."
            case .unreadableForm: "This form could not be read; nothing changed."
            case .notFound: "There is no such page or user."
            }
        }
    }

    func signedIn(_ request: HTTPRequest) async throws -> Signed? {
        guard let token = SessionCookies.read(Self.cookieName, from: request),
              let hash = try await sessions.live(token: token, now: clock())
        else { return nil }
        return Signed(token: token, csrf: csrf.token(for: "console\u{0}" + Hex.encode(hash)))
    }

    /// A signed-in page, or `signedOut`.
    func require(_ request: HTTPRequest) async throws -> Signed {
        guard let signed = try await signedIn(request) else { throw Refusal.signedOut }
        return signed
    }

    /// A console form: a live session, this site's `Origin` (or none: the CSRF token, bound to
    /// the session, is the proof either way), a readable body and its token.
    func form(_ request: HTTPRequest) async throws -> (Signed, FormFields) {
        try checkOrigin(request)
        let signed = try await require(request)
        guard let fields = try? FormFields(parsing: request.body) else { throw Refusal.unreadableForm }
        guard let candidate = fields["csrf"], ConstantTime.equals(candidate.utf8, signed.csrf.utf8) else { throw Refusal.formExpired }
        return (signed, fields)
    }

    /// A browser sends `Origin` with every form POST; a foreign one (or the opaque `null` of a
    /// sandboxed frame or a redirect chain) is refused before anything is read.
    func checkOrigin(_ request: HTTPRequest) throws {
        if let origin = request.headers["Origin"], origin != publicOrigin { throw Refusal.foreignOrigin }
    }

    func cookie(_ started: ConsoleSessionStore.Started) -> String {
        "\(Self.cookieName)=\(started.token); Path=/console; Max-Age=\(ConsoleSessionStore.lifetime); HttpOnly; Secure; SameSite=Strict"
    }

    func clearCookie() -> String {
        "\(Self.cookieName)=; Path=/console; Max-Age=0; HttpOnly; Secure; SameSite=Strict"
    }
}
