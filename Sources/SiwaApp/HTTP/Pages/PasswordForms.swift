import Accounts
import HTTPServer
import OpenSSLCrypto
import Store
import WireFormat

/// The sign-in page's email and password forms (docs/guides/passwords-and-email.md "Pages"): sign in, create an account,
/// forgot password, and the reset page a code leads to. There is no session yet, so each form
/// is bound to the browser by the `siwa_form` cookie (a double-submit CSRF token) and must come
/// from this site's pages. Each answers with a 303: to `/account` with the session cookie, or
/// back to its page with `error=` (the page says it in words), so a reload never repeats it.
struct PasswordForms: Sendable {
    let accounts: PasswordAccounts
    let cookies: SessionCookies
    let csrf: CSRFToken
    let trustedProxies: CIDRSet

    /// The sign-in page's form token, and the cookie to set when the browser has none yet.
    func formToken(_ request: HTTPRequest) -> (token: String, setCookie: (String, String)?) {
        if let cookie = SessionCookies.read(SessionCookies.formName, from: request), cookie.utf8.count == 43 {
            return (csrf.formToken(for: cookie), nil)
        }
        let value = Base64.url.encode(SecureRandom.bytes(32))
        return (csrf.formToken(for: value), ("Set-Cookie", cookies.form(value)))
    }

    func signIn(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request, back: "/") { fields in
            let made = try await accounts.signIn(
                email: fields["email"] ?? "", password: fields["password"] ?? "",
                deviceName: DeviceName.describe(userAgent: request.headers["User-Agent"]),
                client: ClientAddress.attemptKey(of: request, trusted: trustedProxies), audit: AuditContext(request, trusted: trustedProxies))
            return Pages.seeOther("/account", for: request, headers: [("Set-Cookie", cookies.session(made.session))])
        }
    }

    func signUp(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request, back: "/") { fields in
            let made = try await accounts.signUp(
                email: fields["email"] ?? "", password: fields["password"] ?? "",
                givenName: fields.nonEmpty("given_name").map { StoredText.cut($0) },
                familyName: fields.nonEmpty("family_name").map { StoredText.cut($0) },
                deviceName: DeviceName.describe(userAgent: request.headers["User-Agent"]), locale: RequestLocale.of(request),
                audit: AuditContext(request, trusted: trustedProxies))
            return Pages.seeOther("/account?welcome=1", for: request, headers: [("Set-Cookie", cookies.session(made.session))])
        }
    }

    func resetRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request, back: "/") { fields in
            // As the API: the lookup runs after the answer.
            try accounts.requestReset(email: fields["email"] ?? "")
            return Pages.seeOther("/?reset=requested", for: request)
        }
    }

    /// `GET /reset-password?code=…`: the page a reset code leads to (the team's email links
    /// here with the code from the webhook).
    func resetPage(_ request: HTTPRequest) async throws -> HTTPResponse {
        let query = (try? FormFields(parsing: request.query ?? "")) ?? FormFields(fields: [])
        let (token, setCookie) = formToken(request)
        let notice = query["error"].flatMap(Pages.homeNotice)
        let language = PageLanguage(request)
        return Pages.response(
            Pages.resetPassword(
                code: query.nonEmpty("code").map { String($0.prefix(64)) }, csrf: token, notice: notice, language: language,
                here: PageLanguage.here(request)),
            language: language, headers: setCookie.map { [$0] } ?? [])
    }

    func reset(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request, back: "/reset-password") { fields in
            try await accounts.reset(
                code: fields["code"] ?? "", newPassword: fields["new_password"] ?? "", audit: AuditContext(request, trusted: trustedProxies))
            return Pages.seeOther("/?reset=done", for: request)
        }
    }

    /// `GET /verify-email?code=…`: the page a verification code leads to. Only its button
    /// uses the code up, so a link scanner that fetches the page changes nothing.
    func verifyEmailPage(_ request: HTTPRequest) async throws -> HTTPResponse {
        let query = (try? FormFields(parsing: request.query ?? "")) ?? FormFields(fields: [])
        let (token, setCookie) = formToken(request)
        let outcome: Pages.VerifyOutcome? =
            query["done"] == "1" ? .verified : query["error"] == "invalid_grant" ? .invalidCode : query["error"] != nil ? .failed : nil
        let language = PageLanguage(request)
        return Pages.response(
            Pages.verifyEmail(
                code: query.nonEmpty("code").map { String($0.prefix(64)) }, csrf: token, outcome: outcome, language: language,
                here: PageLanguage.here(request)),
            language: language, headers: setCookie.map { [$0] } ?? [])
    }

    func verifyEmail(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request, back: "/verify-email") { fields in
            _ = try await accounts.verifyEmail(code: fields["code"] ?? "", audit: AuditContext(request, trusted: trustedProxies))
            return Pages.seeOther("/verify-email?done=1", for: request)
        }
    }

    private func form(
        _ request: HTTPRequest, back: String, _ action: (FormFields) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        // As the account page's forms: this site's Origin, or the opaque one that a page with
        // `Referrer-Policy: no-referrer` sends; the token is the proof.
        let origin = request.headers["Origin"]
        guard origin == cookies.publicOrigin || origin == "null" else { throw PageError.foreignOrigin }
        let cookie = SessionCookies.read(SessionCookies.formName, from: request)
        guard let fields = try? FormFields(parsing: request.body) else { throw PageError.unreadableForm }
        guard csrf.isValidForm(fields["csrf"], cookie: cookie) else { throw PageError.formExpired }
        do {
            return try await action(fields)
        } catch let failure as PasswordFailure {
            var location = back + "?error=" + ErrorResponses.code(failure)
            // The reset page keeps its code, so a weak password can be replaced and sent again.
            if back == "/reset-password", let code = fields.nonEmpty("code"), failure != .invalidGrant {
                location += "&code=" + FormURLEncoding.escape(String(code.prefix(64)))
            }
            return Pages.seeOther(location, for: request)
        }
    }
}
