import Accounts
import HTTPServer
import Logging
import Store

/// `/`, `/account` and the account page's forms (docs/reference/http-api.md "Web flow"). The forms need a live
/// cookie session, this site's `Origin` (checked by `SessionAuthenticator`) and the page's CSRF
/// token; each answers with a 303 so a reload never repeats it.
struct AccountPages: Sendable {
    let authenticator: SessionAuthenticator
    let sessions: SessionStore
    let deletion: AccountDeletion
    let cookies: SessionCookies
    let csrf: CSRFToken
    let mode: Pages.SignInMode
    let logger: Logger
    /// docs/guides/passwords-and-email.md: the sign-in page's email and password forms, and the account's sign-in methods.
    let passwordForms: PasswordForms
    let passwords: PasswordAccounts
    let webSignIn: WebSignIn
    let trustedProxies: CIDRSet

    func home(_ request: HTTPRequest) async throws -> HTTPResponse {
        let language = PageLanguage(request)
        if try await session(of: request) != nil { return Pages.seeOther("/account", for: request) }
        let query = (try? FormFields(parsing: request.query ?? "")) ?? FormFields(fields: [])
        let notice: PageText? =
            if query["error"] == "cancelled" { .homeCancelled }
            else if query["deleted"] != nil { .homeDeleted }
            else if query["signed_out"] != nil { .homeSignedOut }
            else if query["reset"] == "requested" { .homeResetRequested }
            else if query["reset"] == "done" { .homeResetDone }
            else { query["error"].flatMap(Pages.homeNotice) }
        let options = Dictionary(query.fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        let (token, setCookie) = passwordForms.formToken(request)
        let forms = Pages.PasswordForms(csrf: token, canReset: passwords.canDeliverResetCodes)
        return Pages.response(
            Pages.home(
                button: SignInButton(query: options), mode: mode, notice: notice, passwordForms: forms, language: language,
                here: PageLanguage.here(request)),
            language: language, headers: setCookie.map { [$0] } ?? [])
    }

    func account(_ request: HTTPRequest) async throws -> HTTPResponse {
        let language = PageLanguage(request)
        guard let found = try await session(of: request) else { return Pages.seeOther("/", for: request) }
        let list = try await sessions.list(userID: found.user.id, now: authenticator.clock(), idleTTL: authenticator.idleTTL)
        let query = (try? FormFields(parsing: request.query ?? "")) ?? FormFields(fields: [])
        let notice: PageText? =
            if query["ended"] == "others" { .accountOthersEnded }
            else if query["ended"] != nil { .accountSessionEnded }
            else if query["welcome"] != nil { .accountWelcome }
            else if query["linked"] != nil { .accountAppleAdded }
            else if query["apple"] == "removed" { .accountAppleRemoved }
            else if query["password"] == "set" { .accountPasswordSet }
            else if query["password"] == "removed" { .accountPasswordRemoved }
            else { nil }
        return Pages.response(
            Pages.account(
                user: found.user, sessions: list, currentSessionID: found.session.id, csrf: csrf.token(for: found.session.id), notice: notice,
                problem: query["error"].flatMap(Pages.accountProblem), language: language, here: PageLanguage.here(request)),
            language: language)
    }

    /// The page's session, nil when there is none; a database fault is thrown.
    private func session(of request: HTTPRequest) async throws -> SessionAuthenticator.Authenticated? {
        do {
            return try await authenticator.authenticate(request, origin: .notChecked)
        } catch is SessionAuthenticator.Refusal {
            return nil
        }
    }

    // MARK: - Forms

    func logout(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request) { found, _ in
            _ = try await sessions.end(
                id: found.session.id, userID: found.user.id, reason: .logout, now: authenticator.clock(), audit: AuditContext(request, trusted: trustedProxies, sessionID: found.session.id))
            return Pages.seeOther("/?signed_out=1", for: request, headers: [("Set-Cookie", cookies.clearSession())])
        }
    }

    func endOtherSessions(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request) { found, _ in
            try await sessions.endAll(userID: found.user.id, except: found.session.id, now: authenticator.clock(), audit: AuditContext(request, trusted: trustedProxies, sessionID: found.session.id))
            return Pages.seeOther("/account?ended=others", for: request)
        }
    }

    func endSession(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request) { found, _ in
            let id = request.pathParameters["id"] ?? ""
            // Another user's session, or one already ended, is not found: nothing to say.
            _ = try await sessions.end(
                id: id, userID: found.user.id, reason: id == found.session.id ? .logout : .endedByUser, now: authenticator.clock(), audit: AuditContext(request, trusted: trustedProxies, sessionID: found.session.id))
            if id == found.session.id {
                return Pages.seeOther("/?signed_out=1", for: request, headers: [("Set-Cookie", cookies.clearSession())])
            }
            return Pages.seeOther("/account?ended=1", for: request)
        }
    }

    func deleteAccount(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await form(request) { found, fields in
            guard fields["confirm"] == "yes" else { throw PageError.deletionNotConfirmed }
            _ = try await deletion.delete(userID: found.user.id)
            return Pages.seeOther("/?deleted=1", for: request, headers: [("Set-Cookie", cookies.clearSession())])
        }
    }

    func form(
        _ request: HTTPRequest, _ action: (SessionAuthenticator.Authenticated, FormFields) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        let found: SessionAuthenticator.Authenticated
        do {
            found = try await authenticator.authenticate(request, origin: .oursOrOpaque)
        } catch SessionAuthenticator.Refusal.unauthenticated {
            return Pages.seeOther("/", for: request)
        } catch SessionAuthenticator.Refusal.forbidden {
            throw PageError.foreignOrigin
        }
        guard let fields = try? FormFields(parsing: request.body) else { throw PageError.unreadableForm }
        guard csrf.isValid(fields["csrf"], for: found.session.id) else { throw PageError.formExpired }
        return try await action(found, fields)
    }
}
