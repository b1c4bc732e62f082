import Accounts
import AppleClient
import HTTPServer
import Store
import WireFormat

/// The operators' console (docs/guides/operating.md "Console"): registered only with
/// `admin_token` set, so without it every `/console` path is 404. Its pages and forms, the sign-in
/// with the admin token and the actions; each page is rendered by its own type from data read here.
struct ConsoleRoutes: Sendable {
    let store: Store
    let gate: ConsoleGate
    let deletion: AccountDeletion
    let keys: KeySetCache
    let webhooksConfigured: Bool
    let mailConfigured: Bool
    /// Sessions unused this long are not listed (they no longer authenticate).
    let idleTTL: Int64
    let clock: @Sendable () -> Int64

    /// The console's lines of the route table (`Routes`), each handler answering its own
    /// refusals as console pages.
    var routes: [Route] {
        [
            .console(.get, "/console", page(home)),
            .console(.post, "/console/session", rateLimited: true, page(signIn)),
            .console(.post, "/console/logout", page(signOut)),
            .console(.get, "/console/users", page(users)),
            .console(.get, "/console/users/{id}", page(user)),
            .console(.post, "/console/users/{id}/sessions/end", page(endSessions)),
            .console(.post, "/console/users/{id}/sessions/{session}/end", page(endSession)),
            .console(.post, "/console/users/{id}/external-id", page(setExternalID)),
            .console(.post, "/console/users/{id}/delete", page(deleteUser)),
            .console(.get, "/console/events", page(events)),
            .console(.get, "/console/webhooks", page(webhooks)),
            .console(.post, "/console/webhooks/retry-all", page(retryAllWebhooks)),
            .console(.post, "/console/webhooks/{id}/retry", page(retryWebhook)),
            .console(.get, "/console/email", page(email)),
            .console(.post, "/console/email/retry-all", page(retryAllMail)),
            .console(.post, "/console/email/{id}/retry", page(retryMail)),
            .open(.get, "/static/console.css", StaticAssets.serveConsoleStylesheet),
        ]
    }

    // MARK: Signing in and out

    /// `GET /console`: the overview, or the sign-in form.
    func home(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let signed = try await gate.signedIn(request) else { return Self.signInPage(status: 200, wrongToken: false) }
        let now = clock()
        async let users = store.userCounts()
        async let live = store.sessions.countLive(now: now, idleTTL: idleTTL)
        async let webhookDepth = store.webhooks.depth()
        async let webhooksFailed = store.webhooks.failed(limit: ConsoleQueuePages.listed + 1)
        async let mailDepth = store.mail.depth()
        async let mailFailed = store.mail.failed(limit: ConsoleQueuePages.listed + 1)
        async let revocations = store.revocations.depth()
        async let transfer = store.transfers.status()
        async let charts = charts(now: now)
        let (webhookQueue, mailQueue) = (try await webhookDepth, try await mailDepth)
        let overview = ConsoleOverviewPage(
            users: try await users, liveSessions: try await live,
            webhooks: .init(configured: webhooksConfigured, depth: webhookQueue.count, oldestCreatedAt: webhookQueue.oldestCreatedAt, failed: try await webhooksFailed.count),
            mail: .init(configured: mailConfigured, depth: mailQueue.count, oldestCreatedAt: mailQueue.oldestCreatedAt, failed: try await mailFailed.count),
            revocations: try await revocations, keySource: keys.source.rawValue, keyAge: keys.secondsSinceFetched, keyIDs: keys.keyIDs,
            transfer: try await transfer, charts: try await charts)
        return ConsolePage.response(overview.html(now: now, csrf: signed.csrf))
    }

    /// Sign-ins per hour by method, and failed sign-ins per hour by method, over the 48 hours up
    /// to the current one (from the audit trail).
    func charts(now: Int64) async throws -> [HourlyChart] {
        let first = now / 3_600 * 3_600 - 47 * 3_600
        let hours = (0..<48).map { first + Int64($0) * 3_600 }
        async let succeeded = store.audit.hourlyCounts(type: .signInSucceeded, by: "method", since: first, until: first + 48 * 3_600)
        async let failed = store.audit.hourlyCounts(type: .signInFailed, by: "method", since: first, until: first + 48 * 3_600)
        func series(_ counts: [HourlyCount]) -> [HourlyChart.Series] {
            // Methods in a fixed order, so each keeps its pattern from one load to the next.
            let methods = SignInMethod.allCases.map(\.rawValue).filter { method in counts.contains { $0.key == method } }
            let keys: [String?] = methods.isEmpty ? [nil] : methods
            return keys.map { key in
                HourlyChart.Series(name: key ?? "all", counts: hours.map { hour in
                    counts.filter { $0.hour == hour && (key == nil || $0.key == key) }.reduce(0) { $0 + $1.count }
                })
            }
        }
        return [
            HourlyChart(id: "sign-ins", title: "Sign-ins per hour", hours: hours, series: series(try await succeeded)),
            HourlyChart(id: "failures", title: "Failed sign-ins per hour", hours: hours, series: series(try await failed)),
        ]
    }

    /// `POST /console/session`: the admin token (compared in constant time) opens a session.
    func signIn(_ request: HTTPRequest) async throws -> HTTPResponse {
        try gate.checkOrigin(request)
        guard let fields = try? FormFields(parsing: request.body) else { throw ConsoleGate.Refusal.unreadableForm }
        guard let token = fields["token"], gate.admin.matches(token: token) else { return Self.signInPage(status: 401, wrongToken: true) }
        let started = try await gate.sessions.start(now: clock(), audit: gate.audit(request))
        return ConsolePage.seeOther("/console", headers: [("Set-Cookie", gate.cookie(started))])
    }

    /// `POST /console/logout`: ends the session everywhere and clears the cookie.
    func signOut(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (signed, _) = try await gate.form(request)
        try await gate.sessions.end(token: signed.token)
        return ConsolePage.seeOther("/console", headers: [("Set-Cookie", gate.clearCookie())])
    }

    static func signInPage(status: Int, wrongToken: Bool) -> HTTPResponse {
        var body = #"<section class="card signin"><h1>Console</h1><p class="muted">Sign in with the server's <code>admin_token</code>.</p>"#
        if wrongToken { body += #"<p class="notice" role="alert">That is not the admin token.</p>"# }
        body += #"<form method="post" action="/console/session" class="stack"><label for="token">Admin token</label><input type="password" id="token" name="token" autocomplete="current-password" required autofocus><button type="submit">Sign in</button></form></section>"#
        return ConsolePage.response(ConsolePage.document(title: "Sign in", section: nil, csrf: nil, body: body), status: status)
    }

    // MARK: Users

    /// `GET /console/users?q=&after=`: every user (in id order), or those `q` names exactly.
    func users(_ request: HTTPRequest) async throws -> HTTPResponse {
        let signed = try await gate.require(request)
        let fields = (try? FormFields(parsing: request.query ?? "")) ?? FormFields(fields: [])
        let query = String((fields["q"] ?? "").trimmingHTTPWhitespace().prefix(320))
        let after = fields.nonEmpty("after").map { String($0.prefix(64)) }
        let limit = ConsoleUserPages.pageSize + 1
        let found = query.isEmpty
            ? try await store.users.list(matching: UserFilter(), after: after, limit: limit)
            : try await store.users.search(query, after: after, limit: limit)
        let page = Array(found.prefix(ConsoleUserPages.pageSize))
        let next = found.count > page.count ? page.last?.id : nil
        return ConsolePage.response(ConsoleUserPages.search(query: query, users: page, next: next, now: clock(), csrf: signed.csrf))
    }

    /// `GET /console/users/{id}`.
    func user(_ request: HTTPRequest) async throws -> HTTPResponse {
        let signed = try await gate.require(request)
        let id = request.pathParameters["id"] ?? ""
        guard let user = try await store.users.user(id: id) else { throw ConsoleGate.Refusal.notFound }
        let now = clock()
        async let apple = store.appleView(userID: id)
        async let sessions = store.sessions.list(userID: id, now: now, idleTTL: idleTTL)
        async let timeline = store.audit.page(AuditFilter(userID: id), after: nil, limit: ConsoleEventPages.pageSize)
        let events = try await timeline
        let detail = ConsoleUserPages.Detail(
            user: user, apple: try await apple, sessions: try await sessions, events: events.events, moreEvents: events.next != nil)
        let done = (try? FormFields(parsing: request.query ?? ""))?["done"]
        return ConsolePage.response(ConsoleUserPages.user(detail, done: done, now: now, csrf: signed.csrf))
    }

    func endSessions(_ request: HTTPRequest) async throws -> HTTPResponse {
        _ = try await gate.form(request)
        let id = request.pathParameters["id"] ?? ""
        guard try await store.endSessions(userID: id, now: clock(), audit: gate.audit(request)) != nil else { throw ConsoleGate.Refusal.notFound }
        return Self.back(to: id, done: "sessions_ended")
    }

    func endSession(_ request: HTTPRequest) async throws -> HTTPResponse {
        _ = try await gate.form(request)
        let id = request.pathParameters["id"] ?? ""
        let ended = try await store.sessions.end(
            id: request.pathParameters["session"] ?? "", userID: id, reason: .admin, now: clock(), audit: gate.audit(request))
        return Self.back(to: id, done: ended ? "session_ended" : "not_found")
    }

    func setExternalID(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (_, fields) = try await gate.form(request)
        let id = request.pathParameters["id"] ?? ""
        let value = fields["external_id"] ?? ""
        let externalID: String?
        do {
            externalID = value.isEmpty ? nil : try ExternalIDPatch.validated(value)
        } catch {
            return Self.back(to: id, done: "external_id_invalid")
        }
        do {
            guard try await store.setExternalID(userID: id, externalID: externalID, now: clock(), audit: gate.audit(request)) != nil else { throw ConsoleGate.Refusal.notFound }
        } catch is ExternalIDTaken {
            return Self.back(to: id, done: "external_id_taken")
        }
        return Self.back(to: id, done: externalID == nil ? "external_id_cleared" : "external_id_set")
    }

    func deleteUser(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (_, fields) = try await gate.form(request)
        let id = request.pathParameters["id"] ?? ""
        guard fields["confirm"] == "yes" else { return Self.back(to: id, done: "not_confirmed") }
        guard try await deletion.delete(userID: id, reason: .admin, audit: gate.audit(request)) != nil else { throw ConsoleGate.Refusal.notFound }
        return ConsolePage.seeOther("/console/users?done=user_deleted")
    }

    private static func back(to userID: String, done: String) -> HTTPResponse {
        ConsolePage.seeOther("/console/users/" + FormURLEncoding.escape(userID) + "?done=" + done)
    }

    // MARK: Events

    /// `GET /console/events?type=&user_id=&since=&until=&cursor=`: the audit trail, as
    /// `GET /admin/events` reads it (the same filters, 50 a page).
    func events(_ request: HTTPRequest) async throws -> HTTPResponse {
        let signed = try await gate.require(request)
        // Empty fields of the filter form mean "any".
        let fields = ((try? FormFields(parsing: request.query ?? "")) ?? FormFields(fields: [])).fields.filter { !$0.value.isEmpty }
        let query: EventQuery
        do {
            query = try EventQuery(parsing: fields.map { FormURLEncoding.escape($0.name) + "=" + FormURLEncoding.escape($0.value) }.joined(separator: "&"), shape: .admin)
        } catch {
            return Self.errorPage(400, error.description)
        }
        let page = try await store.audit.page(query.filter, after: query.cursor, limit: ConsoleEventPages.pageSize)
        return ConsolePage.response(ConsoleEventPages.page(
            events: page.events, next: page.next, type: query.filter.typePrefix, userID: query.filter.userID, now: clock(), csrf: signed.csrf))
    }

    // MARK: Failed deliveries

    func webhooks(_ request: HTTPRequest) async throws -> HTTPResponse {
        let signed = try await gate.require(request)
        let failed = try await store.webhooks.failed(limit: ConsoleQueuePages.listed + 1)
        let done = (try? FormFields(parsing: request.query ?? ""))?["done"]
        return ConsolePage.response(ConsoleQueuePages.webhooks(failed, configured: webhooksConfigured, done: done, now: clock(), csrf: signed.csrf))
    }

    func retryWebhook(_ request: HTTPRequest) async throws -> HTTPResponse {
        _ = try await gate.form(request)
        let queued = try await store.webhooks.requeue(id: request.pathParameters["id"] ?? "", now: clock())
        return ConsolePage.seeOther("/console/webhooks?done=" + (queued ? "retried" : "not_found"))
    }

    func retryAllWebhooks(_ request: HTTPRequest) async throws -> HTTPResponse {
        _ = try await gate.form(request)
        _ = try await store.webhooks.requeueAll(now: clock())
        return ConsolePage.seeOther("/console/webhooks?done=retried_all")
    }

    func email(_ request: HTTPRequest) async throws -> HTTPResponse {
        let signed = try await gate.require(request)
        let failed = try await store.mail.failed(limit: ConsoleQueuePages.listed + 1)
        let done = (try? FormFields(parsing: request.query ?? ""))?["done"]
        return ConsolePage.response(ConsoleQueuePages.email(failed, configured: mailConfigured, done: done, now: clock(), csrf: signed.csrf))
    }

    func retryMail(_ request: HTTPRequest) async throws -> HTTPResponse {
        _ = try await gate.form(request)
        let queued = try await store.mail.requeue(id: request.pathParameters["id"] ?? "", now: clock())
        return ConsolePage.seeOther("/console/email?done=" + (queued ? "retried" : "not_found"))
    }

    func retryAllMail(_ request: HTTPRequest) async throws -> HTTPResponse {
        _ = try await gate.form(request)
        _ = try await store.mail.requeueAll(now: clock())
        return ConsolePage.seeOther("/console/email?done=retried_all")
    }

    // MARK: Failures as pages

    /// The console's refusals are pages under its own CSP (signed out: back to the sign-in
    /// form); a database outage is the 503 page; anything else goes to the one error mapping.
    private func page(_ handler: @escaping HTTPHandler) -> HTTPHandler {
        { request in
            do {
                return try await handler(request)
            } catch let refusal as ConsoleGate.Refusal {
                if refusal == .signedOut {
                    // A form posted after the session ended says so; a page just asks to sign in.
                    return request.method == .get
                        ? ConsolePage.seeOther("/console", headers: [("Set-Cookie", gate.clearCookie())])
                        : Self.errorPage(401, "Your console session has ended; sign in again. Nothing changed.")
                }
                return Self.errorPage(refusal.status, refusal.message)
            } catch StoreError.unavailable {
                return Self.errorPage(503, "The database is unavailable; try again shortly. Nothing changed.")
            }
        }
    }

    private static func errorPage(_ status: Int, _ message: String) -> HTTPResponse {
        let body = #"<section class="card"><h1>\#(status == 404 ? "Not found" : "Not done")</h1><p role="alert">\#(HTMLText.escape(message))</p><p><a href="/console">Back to the console</a></p></section>"#
        return ConsolePage.response(ConsolePage.document(title: "Not done", section: nil, csrf: nil, body: body), status: status)
    }
}
