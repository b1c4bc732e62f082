import HTTPServer
import Store
import WireFormat

/// Every cookie the server reads or writes (docs/reference/http-api.md "Web flow"): the session,
/// the web sign-in's binding and the sign-in page's form cookie. Always `Secure`: browsers accept
/// and send such cookies on `http://localhost`, so the demo works over plain HTTP on loopback.
struct SessionCookies: Sendable {
    static let sessionName = "siwa_session"
    /// Binds the browser that started a sign-in to its `state`.
    static let bindingName = "siwa_auth"
    /// The sign-in page's forms' CSRF cookie (docs/guides/passwords-and-email.md: email and password on `/`).
    static let formName = "siwa_form"

    let publicOrigin: String

    /// `SameSite=Lax`: sent on same-site requests and top-level navigations, never on a
    /// cross-site POST (so a form elsewhere cannot act with it).
    func session(_ session: NewSession) -> String {
        "\(Self.sessionName)=\(session.token); Path=/; Max-Age=\(max(0, session.record.expiresAt - session.record.createdAt)); HttpOnly; Secure; SameSite=Lax"
    }

    func clearSession() -> String {
        "\(Self.sessionName)=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax"
    }

    /// `SameSite=None`: Apple's callback is a cross-site POST, which a Lax cookie would miss
    /// (APPLE.md pitfall 2). Scoped to `/auth/apple` and to the state's ten minutes.
    func binding(_ value: String) -> String {
        "\(Self.bindingName)=\(value); Path=/auth/apple; Max-Age=\(WebSignInStore.lifetime); HttpOnly; Secure; SameSite=None"
    }

    func clearBinding() -> String {
        "\(Self.bindingName)=; Path=/auth/apple; Max-Age=0; HttpOnly; Secure; SameSite=None"
    }

    /// `SameSite=Lax`, a year: it holds no secret of an account, only what the sign-in page's
    /// form tokens are bound to.
    func form(_ value: String) -> String {
        "\(Self.formName)=\(value); Path=/; Max-Age=31536000; HttpOnly; Secure; SameSite=Lax"
    }

    /// A request a page of this site made (its `Origin` is `public_url`'s).
    func isSameOrigin(_ request: HTTPRequest) -> Bool {
        request.headers["Origin"] == publicOrigin
    }

    /// The value of the request's cookie `name`, from any of its `Cookie` headers.
    static func read(_ name: String, from request: HTTPRequest) -> String? {
        for header in request.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                // Spaces only: the separator is "; " (RFC 6265 §4.2.1).
                if parts.count == 2, parts[0].trimming(while: { $0 == " " }) == name {
                    return String(parts[1].trimming(while: { $0 == " " }))
                }
            }
        }
        return nil
    }
}
