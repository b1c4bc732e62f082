import HTTPServer

/// Every route the server answers, in one table: method, path, guard and handler
/// (docs/reference/http-api.md describes each; `/openapi.json` is checked against this table).
/// The handlers live under `HTTP/API/` and `HTTP/Pages/`; the guards are put around them once,
/// at start, so a request costs the router's lookup and what its guard checks, nothing more.
struct Routes: Sendable {
    let health: HealthAPI
    let notifications: NotificationsAPI
    let account: AccountAPI
    let nativeSignIn: NativeSignInAPI
    let exchange: AppCodeExchangeAPI
    let passwords: PasswordAPI
    let accessTokens: AccessTokenAPI
    /// Without `admin_token` the admin API does not exist: every `/admin` path is 404.
    let admin: AdminAPI?
    let pages: AccountPages
    let webSignIn: WebSignIn
    let passwordForms: PasswordForms
    /// `siwa-server demo` only.
    let demoWebhooks: DemoWebhookReceiver?
    /// The audit trail: a person's own events, and every user's for the admin API.
    let activity: ActivityAPI
    let adminEvents: AdminEventsAPI?
    /// The operators' console; nil without `admin_token` (every `/console` path is then 404).
    let console: ConsoleRoutes?

    var table: [Route] {
        var table: [Route] = [
            // Operations (docs/guides/operating.md). `/healthz` touches nothing that can block, and
            // is answered on the I/O loop's thread (`immediate:`), as are the session reads.
            .open(.get, "/healthz", immediate: HealthAPI.live),
            .open(.get, "/readyz", health.ready),
            .open(.get, "/metrics", health.metrics),
            .open(.get, "/openapi.json", HealthAPI.openAPI),

            // Apple's server-to-server notifications.
            .open(.post, "/apple/notifications", notifications.receive),

            // Native sign-in, and the app's half of a web sign-in.
            .rateLimited(.post, "/api/auth/apple/nonce", account.issueNonce),
            .rateLimited(.post, "/api/auth/apple", nativeSignIn.signIn),
            .rateLimited(.post, "/api/auth/exchange", exchange.exchange),

            // The signed-in user, their sessions and account.
            .session(.get, "/api/me", origin: .notChecked, immediate: AccountAPI.me),
            .session(.patch, "/api/account", origin: .ours, account.update),
            .session(.delete, "/api/account", origin: .ours, account.delete),
            .session(.post, "/api/logout", origin: .ours, account.logout),
            .session(.get, "/api/sessions", origin: .notChecked, account.listSessions),
            .session(.delete, "/api/sessions/{id}", origin: .ours, account.endSession),
            .session(.get, "/api/account/activity", origin: .notChecked, activity.list),

            // Passwords and email (docs/guides/passwords-and-email.md), the upgrade and linking.
            .rateLimited(.post, "/api/auth/password/sign-up", passwords.signUp),
            .rateLimited(.post, "/api/auth/password", passwords.passwordSignIn),
            .rateLimited(.post, "/api/auth/password/reset-request", passwords.resetRequest),
            .rateLimited(.post, "/api/auth/password/reset", passwords.reset),
            .rateLimited(.post, "/api/auth/apple/upgrade", passwords.upgrade),
            .rateLimited(.post, "/api/auth/email/verify", passwords.verifyEmail),
            .session(.post, "/api/account/email/verify-request", origin: .ours, passwords.verifyRequest),
            .session(.put, "/api/account/password", origin: .ours, passwords.setPassword),
            .session(.delete, "/api/account/password", origin: .ours, passwords.removePassword),
            .session(.post, "/api/account/apple", origin: .ours, passwords.link),
            .session(.delete, "/api/account/apple", origin: .ours, passwords.unlink),

            // The team's other services (docs/guides/connecting-your-backend.md). Forward auth
            // reads only, and the proxy forwards the original request's Origin: not checked.
            .session(.get, "/auth/verify", origin: .notChecked, immediate: ForwardAuthAPI.verify),
            .session(.post, "/api/token", origin: .ours, accessTokens.issue),
            .open(.get, "/.well-known/jwks.json", accessTokens.keySet),

            // The web flow and pages: they check their own sessions, to redirect rather than refuse.
            .page(.get, "/", pages.home),
            .page(.get, "/account", pages.account),
            .rateLimitedPage(.get, "/auth/apple/login", webSignIn.login),
            .rateLimitedPage(.post, "/auth/apple/callback", webSignIn.callback),
            .page(.post, "/account/logout", pages.logout),
            .page(.post, "/account/sessions/end-others", pages.endOtherSessions),
            .page(.post, "/account/sessions/{id}/end", pages.endSession),
            .page(.post, "/account/delete", pages.deleteAccount),
            .rateLimitedPage(.post, "/auth/password/sign-in", passwordForms.signIn),
            .rateLimitedPage(.post, "/auth/password/sign-up", passwordForms.signUp),
            .rateLimitedPage(.post, "/auth/password/reset-request", passwordForms.resetRequest),
            .page(.get, "/reset-password", passwordForms.resetPage),
            .rateLimitedPage(.post, "/auth/password/reset", passwordForms.reset),
            .page(.get, "/verify-email", passwordForms.verifyEmailPage),
            .rateLimitedPage(.post, "/auth/email/verify", passwordForms.verifyEmail),
            .page(.post, "/account/password", pages.setPassword),
            .page(.post, "/account/password/remove", pages.removePassword),
            .rateLimitedPage(.get, "/auth/apple/link", pages.linkApple),
            .page(.post, "/account/apple/remove", pages.removeApple),
            .open(.get, "/static/siwa.css", StaticAssets.serveStylesheet),
            .open(.get, "/static/siwa.js", StaticAssets.serveScript),
        ]
        if let admin {
            table += [
                .admin(.get, "/admin/users", admin.listUsers),
                .admin(.get, "/admin/users/{id}", admin.showUser),
                .admin(.patch, "/admin/users/{id}", admin.setExternalID),
                .admin(.delete, "/admin/users/{id}", admin.deleteUser),
                .admin(.delete, "/admin/users/{id}/sessions", admin.endSessions),
            ]
        }
        if let adminEvents {
            table.append(.admin(.get, "/admin/events", adminEvents.list))
        }
        if let console {
            table += console.routes
        }
        if let demoWebhooks {
            table += [
                .open(.post, DemoWebhookReceiver.path, demoWebhooks.receive),
                .open(.get, DemoWebhookReceiver.path, demoWebhooks.show),
            ]
        }
        return table
    }

    /// The table on a router, each handler inside its guard.
    /// - Parameters:
    ///   - rateLimiter: nil without `rate_limit`: rate-limited routes are then open.
    ///   - admin: nil without `admin_token` (the table then has no admin route).
    static func router(
        _ table: [Route], authenticator: SessionAuthenticator, rateLimiter: ClientRateLimiter?, trustedProxies: CIDRSet,
        admin: AdminAuthenticator?
    ) -> Router {
        let limited: (@escaping HTTPHandler) -> HTTPHandler = { handler in
            rateLimiter?.guarding(trustedProxies: trustedProxies, handler) ?? handler
        }
        var router = Router()
        for route in table {
            let guarded: HTTPHandler
            switch (route.access, route.handler) {
            case (.session(let origin), .session(let handler)):
                guarded = { request in
                    let found = try await authenticator.authenticate(request, origin: origin)
                    return try await handler(request, found)
                }
            case (.open, .request(let handler)):
                guarded = handler
            case (.rateLimited, .request(let handler)):
                guarded = limited(handler)
            case (.admin, .request(let handler)):
                guard let admin else { preconditionFailure("an admin route without admin_token: \(route.path)") }
                guarded = admin.guarding(handler)
            case (.page, .request(let handler)):
                guarded = ShownAsPage.route(handler)
            case (.rateLimitedPage, .request(let handler)):
                guarded = ShownAsPage.route(limited(handler))
            case (.console(let rateLimited), .request(let handler)):
                guarded = rateLimited ? limited(handler) : handler
            case (.session, .request), (_, .session):
                preconditionFailure("a session handler needs the session guard, and only it: \(route.path)")
            }
            let immediate: ImmediateHTTPHandler?
            switch (route.access, route.immediate) {
            case (_, nil):
                immediate = nil
            case (.session(let origin), .session(let handler)?):
                immediate = { request in
                    guard let found = try authenticator.authenticateImmediately(request, origin: origin) else { return nil }
                    return try handler(request, found)
                }
            case (.open, .request(let handler)?):
                immediate = { try handler($0) }
            default:
                preconditionFailure("an immediate handler is for open and session routes only: \(route.path)")
            }
            router.add(route.method, route.path, guarded, immediate: immediate)
        }
        return router
    }
}
