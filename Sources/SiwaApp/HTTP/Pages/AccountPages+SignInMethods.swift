import Accounts
import HTTPServer
import Store

/// The account page's sign-in methods (docs/guides/passwords-and-email.md "Pages"): "Add Sign in with Apple" (the web
/// flow, linking on return), removing it, and setting, changing or removing the password. Each
/// is a form of the page (session cookie, this site's Origin, the page's CSRF token) answered
/// with a 303 to `/account`, with `error=` when refused (the page says it in words).
extension AccountPages {
    func setPassword(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request) { found, fields in
            try await refusalsShown(request) {
                try await passwords.setPassword(
                    for: found.live, current: fields.nonEmpty("current_password"), new: fields["new_password"] ?? "",
                    client: ClientAddress.attemptKey(of: request, trusted: trustedProxies),
                    audit: AuditContext(request, trusted: trustedProxies, sessionID: found.session.id))
                return Pages.seeOther("/account?password=set", for: request)
            }
        }
    }

    func removePassword(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request) { found, _ in
            try await refusalsShown(request) {
                _ = try await passwords.removePassword(userID: found.user.id, sessionID: found.session.id, audit: AuditContext(request, trusted: trustedProxies, sessionID: found.session.id))
                return Pages.seeOther("/account?password=removed", for: request)
            }
        }
    }

    /// `GET /auth/apple/link?csrf=…`: to Apple, to come back linked; only from a session made
    /// in the last 10 minutes. A link, not a form: the pages' CSP (`form-action 'self'`) would
    /// stop a form's redirect to Apple. The page's CSRF token in the query is the proof that
    /// this site's account page sent the browser (the page sends no referrer, so it leaks nowhere).
    func linkApple(_ request: HTTPRequest) async throws -> HTTPResponse {
        let found: SessionAuthenticator.Authenticated
        do {
            found = try await authenticator.authenticate(request, origin: .notChecked)
        } catch is SessionAuthenticator.Refusal {
            return Pages.seeOther("/", for: request)
        }
        guard let query = try? FormFields(parsing: request.query ?? "") else { throw PageError.unreadableForm }
        guard csrf.isValid(query["csrf"], for: found.session.id) else { throw PageError.formExpired }
        guard found.session.createdAt > authenticator.clock() - PasswordAccounts.recentSignIn else {
            return Pages.seeOther("/account?error=" + ErrorResponses.code(.reauthenticationRequired), for: request)
        }
        return try await webSignIn.startLink(sessionID: found.session.id, language: PageLanguage(request))
    }

    func removeApple(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request) { found, _ in
            let now = authenticator.clock()
            do {
                _ = try await passwords.store.unbindAppleID(
                    userID: found.user.id, sessionID: found.session.id, now: now, firstAttemptAt: now, audit: AuditContext(request, trusted: trustedProxies, sessionID: found.session.id))
            } catch PasswordAccountConflict.lastSignInMethod {
                return Pages.seeOther("/account?error=" + ErrorResponses.code(.lastSignInMethod), for: request)
            }
            return Pages.seeOther("/account?apple=removed", for: request)
        }
    }

    private func refusalsShown(_ request: HTTPRequest, _ action: () async throws -> HTTPResponse) async throws -> HTTPResponse {
        do {
            return try await action()
        } catch let failure as PasswordFailure {
            return Pages.seeOther("/account?error=" + ErrorResponses.code(failure), for: request)
        }
    }
}
