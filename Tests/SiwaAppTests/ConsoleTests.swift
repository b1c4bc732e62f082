import Foundation
import HTTPServer
import OpenSSLCrypto
import Store
import Testing
import WireFormat
@testable import SiwaApp

/// The operators' console (docs/guides/operating.md "Console"), in process on both engines with
/// a socket sample: the sign-in with the admin token, the cookie, CSRF and `Origin` on every form,
/// the pages and the actions, and that a refused form changes nothing.
@Suite struct ConsoleTests {
    static let adminToken = "console-test-admin-token-0123456789"
    static let exactCSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'"

    /// An application with the console on, signed in: the cookie's value and the page's CSRF token.
    struct Console {
        let app: TestApp
        let cookie: String
        let csrf: String

        var origin: String { app.configuration.publicOrigin }

        static func with<T>(
            engine: DatabaseEngine, transport: Transport = .inProcess, clock: HeldClock? = nil,
            configure: @escaping (inout Configuration) -> Void = { _ in }, _ body: (Console) async throws -> T
        ) async throws -> T {
            try await withApp(engine: engine, transport: transport, clock: clock, configure: {
                $0.adminToken = ConsoleTests.adminToken
                configure(&$0)
            }) { app in
                let signIn = try await app.send(
                    .post, "/console/session", headers: [("Origin", app.configuration.publicOrigin), ("Content-Type", "application/x-www-form-urlencoded")],
                    body: "token=" + ConsoleTests.adminToken)
                #expect(signIn.status == 303)
                let cookie = try #require(ConsoleTests.cookieValue(signIn.headers["set-cookie"]))
                let overview = try await app.send(.get, "/console", headers: [("Cookie", "siwa_console=\(cookie)")])
                let csrf = try #require(ConsoleTests.csrf(in: overview.body))
                return try await body(Console(app: app, cookie: cookie, csrf: csrf))
            }
        }

        func get(_ path: String, cookie: String? = nil) async throws -> Reply {
            try await app.send(.get, path, headers: [("Cookie", "siwa_console=\(cookie ?? self.cookie)")])
        }

        /// A console form: the session's cookie, this site's `Origin` and the CSRF token unless
        /// a test says otherwise.
        func post(_ path: String, _ fields: [(String, String)] = [], csrf: String?? = .none, origin: String?? = .none, cookie: String? = nil) async throws -> Reply {
            var form = fields
            if let token = csrf ?? self.csrf { form.append(("csrf", token)) }
            var headers = [("Cookie", "siwa_console=\(cookie ?? self.cookie)"), ("Content-Type", "application/x-www-form-urlencoded")]
            if let origin = origin ?? self.origin { headers.append(("Origin", origin)) }
            return try await app.send(.post, path, headers: headers, body: ConsoleTests.encode(form))
        }
    }

    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { FormURLEncoding.escape($0.0) + "=" + FormURLEncoding.escape($0.1) }.joined(separator: "&")
    }

    static func cookieValue(_ header: String?) -> String? {
        guard let header, header.hasPrefix("siwa_console=") else { return nil }
        let value = header.dropFirst("siwa_console=".count).prefix { $0 != ";" }
        return value.isEmpty ? nil : String(value)
    }

    static func csrf(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    /// A user with a session (its bearer token) and, when given, an email and an external id.
    static func user(_ app: TestApp, sub: String, email: String? = nil, externalID: String? = nil) async throws -> (id: String, token: String) {
        let token = try await app.session(sub: sub)
        let id = try #require(try await app.store.users.user(appleSub: sub)?.id)
        if let email {
            _ = try await app.sql.write { connection in
                try connection.run("UPDATE users SET email = ?, email_verified = 1 WHERE id = ?", [.text(email), .text(id)])
            }
        }
        if let externalID { _ = try await app.store.setExternalID(userID: id, externalID: externalID, now: 1) }
        return (id, token)
    }

    // MARK: Existence and sign-in

    @Test func withoutAdminTokenEveryConsolePathIs404() async throws {
        try await withApp { app in
            for (method, path) in [(HTTPMethod.get, "/console"), (.post, "/console/session"), (.get, "/console/users"), (.get, "/static/console.css")] {
                let reply = try await app.send(method, path, headers: [("Origin", app.configuration.publicOrigin)], body: "token=x")
                #expect(reply.status == 404, "\(method) \(path)")
                #expect(reply.headers["set-cookie"] == nil)
            }
        }
    }

    @Test(arguments: DatabaseEngine.available, Transport.allCases)
    func theAdminTokenOpensASessionHeldByAStrictCookieWhoseHashAloneIsStored(_ engine: DatabaseEngine, _ transport: Transport) async throws {
        try await withApp(engine: engine, transport: transport, configure: { $0.adminToken = Self.adminToken }) { app in
            let origin = app.configuration.publicOrigin
            let form = [("Origin", origin), ("Content-Type", "application/x-www-form-urlencoded")]
            let signedOut = try await app.send(.get, "/console")
            #expect(signedOut.status == 200)
            #expect(signedOut.body.contains(#"action="/console/session""#))
            #expect(signedOut.headers["content-security-policy"] == Self.exactCSP)

            let wrong = try await app.send(.post, "/console/session", headers: form, body: "token=not-the-token")
            #expect(wrong.status == 401)
            #expect(wrong.headers["set-cookie"] == nil)
            #expect(wrong.body.contains("That is not the admin token."))
            #expect(try app.sql.read { try $0.queryOne("SELECT COUNT(*) AS n FROM console_sessions")?.int("n") } == 0)

            let right = try await app.send(.post, "/console/session", headers: form, body: "token=" + Self.adminToken)
            #expect(right.status == 303)
            #expect(right.headers["location"] == "/console")
            let setCookie = try #require(right.headers["set-cookie"])
            #expect(setCookie.hasSuffix("; Path=/console; Max-Age=43200; HttpOnly; Secure; SameSite=Strict"))
            let cookie = try #require(Self.cookieValue(setCookie))
            let stored = try app.sql.read { try $0.query("SELECT token_hash FROM console_sessions").map { try $0.blob("token_hash") } }
            #expect(stored == [SHA256Digest.of(cookie)])

            let overview = try await app.send(.get, "/console", headers: [("Cookie", "siwa_console=\(cookie)")])
            #expect(overview.status == 200)
            #expect(overview.body.contains("<h1>Overview</h1>"))
            #expect(overview.headers["content-security-policy"] == Self.exactCSP)
            #expect(overview.headers["cache-control"] == "no-store")
            #expect(!overview.body.contains("<script"))
            #expect(!overview.body.contains("style="))
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aForeignOriginCannotSignInAndABadCookieIsSignedOut(_ engine: DatabaseEngine) async throws {
        try await withApp(engine: engine, configure: { $0.adminToken = Self.adminToken }) { app in
            let foreign = try await app.send(
                .post, "/console/session", headers: [("Origin", "https://evil.example"), ("Content-Type", "application/x-www-form-urlencoded")],
                body: "token=" + Self.adminToken)
            #expect(foreign.status == 403)
            #expect(foreign.headers["set-cookie"] == nil)
            for cookie in ["", "x", String(repeating: "A", count: 43), String(repeating: "é", count: 4_000)] {
                let page = try await app.send(.get, "/console/users", headers: [("Cookie", "siwa_console=\(cookie)")])
                #expect(page.status == 303)
                #expect(page.headers["location"] == "/console")
            }
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func signingOutEndsTheSessionAndTwelveHoursEndIt(_ engine: DatabaseEngine) async throws {
        let clock = HeldClock(1_800_000_000)
        try await Console.with(engine: engine, clock: clock) { console in
            let out = try await console.post("/console/logout")
            #expect(out.status == 303)
            #expect(out.headers["set-cookie"]?.hasPrefix("siwa_console=; Path=/console; Max-Age=0") == true)
            #expect(try await console.get("/console/users").status == 303)
        }
        try await Console.with(engine: engine, clock: clock) { (console: Console) async throws in
            clock.advance(by: 12 * 3_600 - 1)
            #expect(try await console.get("/console/users").status == 200)
            clock.advance(by: 1)
            #expect(try await console.get("/console/users").status == 303)
        }
    }

    // MARK: Forms refused change nothing

    @Test(arguments: DatabaseEngine.available)
    func aFormWithoutTheTokenOrFromAnotherSiteChangesNothing(_ engine: DatabaseEngine) async throws {
        try await Console.with(engine: engine) { console in
            let (id, bearer) = try await Self.user(console.app, sub: "000950.00000000000000000000000000000950.0950")
            let path = "/console/users/\(id)/sessions/end"
            let noToken = try await console.post(path, csrf: .some(nil))
            #expect(noToken.status == 403)
            let wrongToken = try await console.post(path, csrf: "AAAA")
            #expect(wrongToken.status == 403)
            let foreign = try await console.post(path, origin: "https://evil.example")
            #expect(foreign.status == 403)
            #expect(foreign.headers["content-security-policy"] == Self.exactCSP)
            let opaque = try await console.post(path, origin: "null")
            #expect(opaque.status == 403)
            // Another console session's token is not this one's.
            let other = try await console.app.send(
                .post, "/console/session", headers: [("Origin", console.origin), ("Content-Type", "application/x-www-form-urlencoded")],
                body: "token=" + Self.adminToken)
            let otherCookie = try #require(Self.cookieValue(other.headers["set-cookie"]))
            #expect(try await console.post(path, cookie: otherCookie).status == 403)
            #expect(try await console.app.send(.get, "/api/me", bearer: bearer).status == 200, "the session survived every refused form")

            let ended = try await console.post(path)
            #expect(ended.status == 303)
            #expect(ended.headers["location"] == "/console/users/\(id)?done=sessions_ended")
            #expect(try await console.app.send(.get, "/api/me", bearer: bearer).status == 401)
        }
    }

    // MARK: Pages and actions

    @Test(arguments: DatabaseEngine.available)
    func searchFindsAUserByEmailSubExternalIDOrIDExactly(_ engine: DatabaseEngine) async throws {
        try await Console.with(engine: engine) { console in
            let sub = "000951.00000000000000000000000000000951.0951"
            let (id, _) = try await Self.user(console.app, sub: sub, email: "Juice@Example.com", externalID: "crm-951")
            _ = try await Self.user(console.app, sub: "000952.00000000000000000000000000000952.0952", email: "other@example.com")
            for query in ["juice@example.com", sub, "crm-951", id] {
                let page = try await console.get("/console/users?q=" + FormURLEncoding.escape(query))
                #expect(page.status == 200)
                #expect(page.body.contains("/console/users/\(id)"), "\(query)")
                #expect(!page.body.contains("other@example.com"), "\(query)")
            }
            let none = try await console.get("/console/users?q=juice")
            #expect(none.body.contains("No user has exactly this"))
            let all = try await console.get("/console/users")
            #expect(all.body.contains("other@example.com") && all.body.contains("Juice@Example.com"))
            // Whatever a query holds, it comes back escaped.
            let hostile = try await console.get("/console/users?q=%3Cscript%3Ex%3C%2Fscript%3E")
            #expect(hostile.body.contains("&lt;script&gt;x&lt;/script&gt;"))
            #expect(!hostile.body.contains("<script"))
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func theUserPageShowsAppleViewAndSessionsAndEndsOne(_ engine: DatabaseEngine) async throws {
        try await Console.with(engine: engine) { console in
            let (id, first) = try await Self.user(console.app, sub: "000953.00000000000000000000000000000953.0953")
            let second = try await console.app.session(sub: "000953.00000000000000000000000000000953.0953")
            let page = try await console.get("/console/users/\(id)")
            #expect(page.status == 200)
            #expect(page.body.contains("000953.00000000000000000000000000000953.0953"))
            #expect(page.body.contains("Apple&#39;s view") || page.body.contains("Apple's view"))
            let sessions = try await console.app.store.sessions.list(userID: id, now: Int64(Date().timeIntervalSince1970))
            #expect(sessions.count == 2)
            for session in sessions { #expect(page.body.contains("/console/users/\(id)/sessions/\(session.id)/end")) }
            #expect(page.body.contains(#"<th scope="col">Method</th><th scope="col">From</th>"#), "where each session came from")
            let secondID = try #require(try await console.app.store.sessions.authenticate(token: second, now: Int64(Date().timeIntervalSince1970), idleTTL: 86_400)?.0.id)
            let ended = try await console.post("/console/users/\(id)/sessions/\(secondID)/end")
            #expect(ended.headers["location"] == "/console/users/\(id)?done=session_ended")
            #expect(try await console.app.send(.get, "/api/me", bearer: second).status == 401)
            #expect(try await console.app.send(.get, "/api/me", bearer: first).status == 200)
            let after = try await console.get("/console/users/\(id)?done=session_ended")
            #expect(after.body.contains("The session has ended."))
            #expect(try await console.get("/console/users/usr_nobody").status == 404)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func externalIDIsSetClearedAndRefusedWhenTakenOrInvalid(_ engine: DatabaseEngine) async throws {
        try await Console.with(engine: engine) { console in
            let (id, _) = try await Self.user(console.app, sub: "000954.00000000000000000000000000000954.0954")
            _ = try await Self.user(console.app, sub: "000955.00000000000000000000000000000955.0955", externalID: "taken")
            let path = "/console/users/\(id)/external-id"
            #expect(try await console.post(path, [("external_id", "crm-954")]).headers["location"] == "/console/users/\(id)?done=external_id_set")
            #expect(try await console.app.store.users.user(id: id)?.externalID == "crm-954")
            #expect(try await console.post(path, [("external_id", "taken")]).headers["location"] == "/console/users/\(id)?done=external_id_taken")
            #expect(try await console.post(path, [("external_id", "a\u{7}b")]).headers["location"] == "/console/users/\(id)?done=external_id_invalid")
            #expect(try await console.post(path, [("external_id", String(repeating: "x", count: 257))]).headers["location"] == "/console/users/\(id)?done=external_id_invalid")
            #expect(try await console.app.store.users.user(id: id)?.externalID == "crm-954", "refused values changed nothing")
            #expect(try await console.post(path, [("external_id", "")]).headers["location"] == "/console/users/\(id)?done=external_id_cleared")
            #expect(try await console.app.store.users.user(id: id)?.externalID == nil)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func deletingNeedsTheConfirmation(_ engine: DatabaseEngine) async throws {
        try await Console.with(engine: engine) { console in
            let (id, bearer) = try await Self.user(console.app, sub: "000956.00000000000000000000000000000956.0956")
            let unconfirmed = try await console.post("/console/users/\(id)/delete")
            #expect(unconfirmed.headers["location"] == "/console/users/\(id)?done=not_confirmed")
            #expect(try await console.app.store.users.user(id: id) != nil)
            let deleted = try await console.post("/console/users/\(id)/delete", [("confirm", "yes")])
            #expect(deleted.status == 303)
            #expect(deleted.headers["location"] == "/console/users?done=user_deleted")
            #expect(try await console.app.store.users.user(id: id) == nil)
            #expect(try await console.app.send(.get, "/api/me", bearer: bearer).status == 401)
            #expect(try await console.post("/console/users/\(id)/delete", [("confirm", "yes")]).status == 404)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aFailedWebhookIsListedAndQueuedAgain(_ engine: DatabaseEngine) async throws {
        try await Console.with(engine: engine, configure: {
            // Nothing listens on the discard port: deliveries fail, which is all this test needs.
            $0.webhookURL = "http://127.0.0.1:9/hooks"
            $0.webhookSecret = Array(repeating: 1, count: 32)
        }) { console in
            let (id, _) = try await Self.user(console.app, sub: "000957.00000000000000000000000000000957.0957", externalID: "crm-957")
            let eventID = try #require(try console.app.sql.read {
                try $0.queryOne("SELECT id FROM webhook_events WHERE user_id = ? AND type = 'user.updated'", [.text(id)])?.string("id")
            })
            _ = try await console.app.sql.write { connection in
                try connection.run("UPDATE webhook_events SET failed_at = 1, last_error = 'HTTP 500 <b>', attempts = 9 WHERE id = ?", [.text(eventID)])
            }
            let page = try await console.get("/console/webhooks")
            #expect(page.status == 200)
            #expect(page.body.contains(eventID))
            #expect(page.body.contains("HTTP 500 &lt;b&gt;"))
            let retried = try await console.post("/console/webhooks/\(eventID)/retry")
            #expect(retried.headers["location"] == "/console/webhooks?done=retried")
            let failedAt = try console.app.sql.read {
                try $0.queryOne("SELECT failed_at FROM webhook_events WHERE id = ?", [.text(eventID)])?.optionalInt64("failed_at")
            }
            #expect(failedAt == nil, "queued again")
            #expect(try await console.post("/console/webhooks/evt_unknown/retry").headers["location"] == "/console/webhooks?done=not_found")
        }
    }

    @Test func theOverviewCountsUsersSessionsAndQueues() async throws {
        try await Console.with(engine: .sqlite) { console in
            _ = try await Self.user(console.app, sub: "000958.00000000000000000000000000000958.0958")
            _ = try await Self.user(console.app, sub: "000959.00000000000000000000000000000959.0959")
            let page = try await console.get("/console")
            #expect(page.body.contains(#"<div class="stat-value"><a href="/console/users">2</a></div><div class="stat-label">Users</div>"#))
            #expect(page.body.contains(#"<div class="stat-value">2</div><div class="stat-label">With an Apple ID</div>"#))
            #expect(page.body.contains(#"<div class="stat-value">0</div><div class="stat-label">With a password</div>"#))
            #expect(page.body.contains(#"<div class="stat-value">2</div><div class="stat-label">Live sessions</div>"#))
            #expect(page.body.contains("off: webhook_url is not set"))
        }
    }

    @Test func signInAttemptsAreRateLimitedPerClient() async throws {
        try await withApp(configure: {
            $0.adminToken = Self.adminToken
            $0.rateLimit = RateLimit(requests: 3, perSeconds: 60)
        }) { app in
            let form = [("Origin", app.configuration.publicOrigin), ("Content-Type", "application/x-www-form-urlencoded")]
            var statuses: [Int] = []
            for _ in 0..<5 { statuses.append(try await app.send(.post, "/console/session", headers: form, body: "token=guess").status) }
            #expect(statuses.prefix(3).allSatisfy { $0 == 401 })
            #expect(statuses.last == 429)
        }
    }

    // MARK: The audit trail in the console

    static func events(_ app: TestApp, type: String) throws -> [(actor: String, userID: String?, detail: String, ip: String?)] {
        try app.sql.read { connection in
            try connection.query("SELECT actor, user_id, detail, ip FROM events WHERE type = ? ORDER BY seq", [.text(type)]).map {
                (try $0.string("actor"), try $0.optionalString("user_id"), try $0.string("detail"), try $0.optionalString("ip"))
            }
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func everyConsoleActionIsAnEventByTheAdminAndTheUserPageShowsTheTimeline(_ engine: DatabaseEngine) async throws {
        try await Console.with(engine: engine) { console in
            let signedIn = try Self.events(console.app, type: "admin.signed_in")
            #expect(signedIn.count == 1)
            #expect(signedIn.first?.actor == "admin")
            let (id, _) = try await Self.user(console.app, sub: "000960.00000000000000000000000000000960.0960")
            _ = try await console.post("/console/users/\(id)/external-id", [("external_id", "crm-960")])
            _ = try await console.post("/console/users/\(id)/sessions/end")
            let updated = try Self.events(console.app, type: "user.updated").filter { $0.actor == "admin" }
            #expect(updated.count == 1 && updated.first?.userID == id && updated.first?.detail.contains("external_id") == true)
            let ended = try Self.events(console.app, type: "session.ended")
            #expect(ended.count == 1 && ended.first?.actor == "admin" && ended.first?.detail.contains("\"admin\"") == true)

            let page = try await console.get("/console/users/\(id)")
            #expect(page.body.contains("<h2>Activity</h2>"))
            #expect(page.body.contains("<code>session.ended</code>") && page.body.contains("reason: admin"))
            #expect(page.body.contains("<code>user.updated</code>"))

            let all = try await console.get("/console/events")
            #expect(all.status == 200)
            #expect(all.body.contains("<code>admin.signed_in</code>"))
            let sessionsOnly = try await console.get("/console/events?type=session.&user_id=")
            #expect(sessionsOnly.body.contains("<code>session.ended</code>"))
            #expect(!sessionsOnly.body.contains("<code>admin.signed_in</code>"))
            #expect(try await console.get("/console/events?cursor=not-a-cursor").status == 400)
            #expect(try await console.get("/console/events?color=red").status == 400)

            // A refused form records nothing.
            let before = try Self.events(console.app, type: "user.deleted").count
            _ = try await console.post("/console/users/\(id)/delete", [("confirm", "yes")], csrf: "AAAA")
            #expect(try Self.events(console.app, type: "user.deleted").count == before)
            _ = try await console.post("/console/users/\(id)/delete", [("confirm", "yes")])
            let deleted = try Self.events(console.app, type: "user.deleted")
            #expect(deleted.count == before + 1 && deleted.last?.actor == "admin" && deleted.last?.detail.contains("\"admin\"") == true)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func theOverviewDrawsSignInsAndFailuresPerHourFromTheTrail(_ engine: DatabaseEngine) async throws {
        let now: Int64 = 1_795_737_600 + 30 * 60  // 2026-11-27T00:30Z
        let clock = HeldClock(now)
        try await Console.with(engine: engine, clock: clock) { console in
            let rows: [(Int64, String, String)] = [
                (now - 3_600, "sign_in.succeeded", "apple"), (now - 3_600, "sign_in.succeeded", "apple"), (now - 100, "sign_in.succeeded", "password"),
                (now - 7_200, "sign_in.failed", "password"), (now - 49 * 3_600, "sign_in.succeeded", "apple"),
            ]
            _ = try await console.app.sql.write { connection in
                for (index, row) in rows.enumerated() {
                    _ = try connection.run(
                        "INSERT INTO events(id, at, type, user_id, session_id, actor, ip, user_agent, detail) VALUES (?, ?, ?, NULL, NULL, 'user', NULL, NULL, ?)",
                        [.text("evt_chart\(index)"), .integer(row.0), .text(row.1), .text("{\"method\":\"\(row.2)\"}")])
                }
            }
            let page = try await console.get("/console")
            // The one 49 hours ago is outside the chart.
            #expect(page.body.contains("Sign-ins per hour: 3 in the last 48 hours (apple 2, password 1); the busiest hour, 23:00 UTC, had 2."))
            #expect(page.body.contains("Failed sign-ins per hour: 1 in the last 48 hours (password 1)"))
            #expect(page.body.contains(#"<svg class="chart""#))
        }
    }
}

/// SHA-256 of a cookie's value, as the console stores it.
enum SHA256Digest {
    static func of(_ text: String) -> [UInt8] { SHA256.hash(Array(text.utf8)) }
}
