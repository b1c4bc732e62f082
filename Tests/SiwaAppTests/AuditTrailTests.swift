import AppleSimulator
import Foundation
import HTTPServer
import JSON
import Logging
import Store
import Testing
@testable import SiwaApp

/// The audit trail end to end (docs/reference/http-api.md "Activity"): each family of events
/// is written by the action that makes it and by no other, on both engines, with the actor,
/// client address (after `trusted_proxies`) and user agent of the request; refused actions
/// record nothing; people read only their own events, operators every one with the token.
@Suite struct AuditTrailTests {
    static let app = "com.example.app"
    static let adminToken = "adm-audit-0123456789abcdef0123456789"
    static let userAgent = "Juice/1.0"
    static let client = "203.0.113.9"

    /// What a phone behind the team's proxy sends with every request.
    static let fromPhone = [("User-Agent", userAgent), ("X-Forwarded-For", client), ("Content-Type", "application/json")]

    static func configure(_ configuration: inout Configuration) {
        configuration.clientIDs = [app]
        configuration.adminToken = adminToken
        // In process the peer is 127.0.0.1: the proxy whose X-Forwarded-For is believed.
        configuration.trustedProxies = try! CIDRSet(cidrs: ["127.0.0.1/32"])
    }

    static func sub(_ n: Int) -> String { "000400.\(String(repeating: "0", count: 29))\(100 + n).0400" }

    /// A native sign-in from the phone; its session token and user id.
    static func signIn(_ app: TestApp, sub: String, nonce: String, email: String? = nil) async throws -> (token: String, userID: String) {
        let token = try app.simulator.issueCode(sub: sub, clientID: Self.app, nonce: nonce, email: email, isPrivateEmail: email.map { $0.hasSuffix("privaterelay.appleid.com") }).identityToken
        let body = JSONWriter.string(.object(JSONObject([("identity_token", .string(token)), ("nonce", .string(nonce))])))
        let reply = try await app.send(.post, "/api/auth/apple", headers: fromPhone, body: body)
        #expect(reply.status == 200, "\(reply.body)")
        let json = try #require(reply.json)
        return (try #require(json["session"]?.object?["token"]?.string), try #require(json["user"]?.object?["id"]?.string))
    }

    /// Every event `/admin/events` lists for the query, newest first (all pages).
    static func events(_ app: TestApp, _ query: String = "") async throws -> [JSONObject] {
        var all: [JSONObject] = []
        var cursor: String?
        repeat {
            let target = "/admin/events?limit=200" + (query.isEmpty ? "" : "&" + query) + (cursor.map { "&cursor=" + $0 } ?? "")
            let reply = try await app.send(.get, target, bearer: adminToken)
            #expect(reply.status == 200, "\(reply.body)")
            let json = try #require(reply.json)
            all += try #require(json["events"]?.array).compactMap(\.object)
            cursor = json["next_cursor"]?.string
        } while cursor != nil
        return all
    }

    static func types(_ events: [JSONObject]) -> [String] { events.compactMap { $0["type"]?.string } }

    /// The simulator signs tokens at the wall clock's time: the held clock starts there.
    static func started(_ engine: DatabaseEngine, _ body: (TestApp, HeldClock) async throws -> Void) async throws {
        let clock = HeldClock()
        try await withApp(engine: engine, clock: clock, configure: configure) { app in
            try await app.waitUntilReady()
            try await body(app, clock)
        }
    }

    // MARK: - Families

    @Test(arguments: DatabaseEngine.available)
    func signInsAndSessionEndsAreRecordedWithWhoAndWhere(_ engine: DatabaseEngine) async throws {
        try await Self.started(engine) { app, clock in
            let start = clock.now
            let first = try await Self.signIn(app, sub: Self.sub(1), nonce: "n-1")
            var events = try await Self.events(app, "user_id=" + first.userID)
            #expect(Self.types(events) == ["sign_in.succeeded", "user.created"])
            for event in events {
                #expect(event["actor"]?.string == "user")
                #expect(event["ip"]?.string == Self.client)
                #expect(event["user_agent"]?.string == Self.userAgent)
                #expect(event["at"]?.string == RFC3339.format(start))
                #expect(event["id"]?.string?.hasPrefix("evt_") == true)
            }
            #expect(events[0]["detail"] == .object(JSONObject([("method", .string("apple")), ("created", .bool(true))])))
            #expect(events[1]["detail"] == .object(JSONObject([("method", .string("apple"))])))
            let firstSession = try #require(events[0]["session_id"]?.string)

            clock.advance(by: 60)
            let second = try await Self.signIn(app, sub: Self.sub(1), nonce: "n-2")
            events = try await Self.events(app, "user_id=" + first.userID)
            #expect(Self.types(events) == ["sign_in.succeeded", "sign_in.succeeded", "user.created"])
            #expect(events[0]["detail"]?.object?["created"] == .bool(false))

            // The second device ends the first, then signs out.
            clock.advance(by: 60)
            #expect(try await app.send(.delete, "/api/sessions/" + firstSession, bearer: second.token, headers: Self.fromPhone).status == 204)
            #expect(try await app.send(.post, "/api/logout", bearer: second.token, headers: Self.fromPhone).status == 204)
            events = try await Self.events(app, "type=session.")
            #expect(events.map { $0["detail"]?.object?["reason"]?.string } == ["logout", "ended_by_user"])
            #expect(events.last?["session_id"]?.string == firstSession)
            #expect(events.allSatisfy { $0["ip"]?.string == Self.client && $0["actor"]?.string == "user" })
            #expect(try await Self.events(app).count == 5, "nothing else was recorded")
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func applesNotificationsAreRecordedWithActorApple(_ engine: DatabaseEngine) async throws {
        try await Self.started(engine) { app, _ in
            let sub = Self.sub(2)
            let user = try await Self.signIn(app, sub: sub, nonce: "n-1", email: "ada@privaterelay.appleid.com")
            func deliver(_ type: String) async throws {
                let payload = try app.simulator.notificationPayload(NotificationEvent(type: type, sub: sub, clientID: Self.app))
                let reply = try await app.send(.post, "/apple/notifications", headers: [("Content-Type", "application/json")], body: #"{"payload":""# + payload + #""}"#)
                #expect(reply.body == #"{"status":"processed"}"#)
            }
            try await deliver("email-disabled")
            try await deliver("consent-revoked")
            var apple = try await Self.events(app, "type=apple.")
            #expect(Self.types(apple) == ["apple.consent_revoked", "apple.email_disabled"])
            #expect(apple.allSatisfy { $0["actor"]?.string == "apple" && $0["ip"] == .null && $0["user_id"]?.string == user.userID })
            let ended = try await Self.events(app, "type=session.ended")
            #expect(ended.map { $0["detail"]?.object?["reason"]?.string } == ["apple_consent_revoked"])

            try await deliver("account-delete")
            apple = try await Self.events(app, "type=apple.")
            #expect(Self.types(apple).first == "apple.account_deleted")
            let deleted = try await Self.events(app, "type=user.deleted")
            #expect(deleted.map { $0["detail"]?.object?["reason"]?.string } == ["apple_account_deleted"])
            // The user is gone; their timeline stays until audit_retention.
            #expect(try await Self.events(app, "user_id=" + user.userID).count == 7)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func operatorsActionsAreRecordedWithActorAdmin(_ engine: DatabaseEngine) async throws {
        try await Self.started(engine) { app, _ in
            let user = try await Self.signIn(app, sub: Self.sub(3), nonce: "n-1")
            let other = try await Self.signIn(app, sub: Self.sub(4), nonce: "n-2")
            let operatorHeaders = [("User-Agent", "curl/8.5"), ("X-Forwarded-For", "198.51.100.7"), ("Content-Type", "application/json")]
            #expect(try await app.send(.patch, "/admin/users/" + user.userID, bearer: Self.adminToken, headers: operatorHeaders, body: #"{"external_id":"crm-1"}"#).status == 200)
            // Refused (another user has the value, no such user): nothing recorded.
            #expect(try await app.send(.patch, "/admin/users/" + other.userID, bearer: Self.adminToken, headers: operatorHeaders, body: #"{"external_id":"crm-1"}"#).status == 409)
            #expect(try await app.send(.delete, "/admin/users/usr_nobody/sessions", bearer: Self.adminToken, headers: operatorHeaders).status == 404)
            #expect(try await app.send(.delete, "/admin/users/" + user.userID + "/sessions", bearer: Self.adminToken, headers: operatorHeaders).status == 204)
            #expect(try await app.send(.delete, "/admin/users/" + user.userID, bearer: Self.adminToken, headers: operatorHeaders).status == 202)

            let events = try await Self.events(app, "user_id=" + user.userID)
            #expect(Self.types(events) == ["user.deleted", "session.ended", "user.updated", "sign_in.succeeded", "user.created"])
            #expect(events[0]["detail"] == .object(JSONObject([("reason", .string("admin"))])))
            #expect(events[1]["detail"] == .object(JSONObject([("reason", .string("admin"))])))
            #expect(events[2]["detail"] == .object(JSONObject([("fields", .array([.string("external_id")]))])))
            for event in events.prefix(3) {
                #expect(event["actor"]?.string == "admin")
                #expect(event["ip"]?.string == "198.51.100.7")
                #expect(event["user_agent"]?.string == "curl/8.5")
            }
            #expect(try await Self.events(app, "user_id=" + other.userID).count == 2, "the refusal recorded nothing")
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func passwordAccountsRecordSignUpFailuresAndChanges(_ engine: DatabaseEngine) async throws {
        try await Self.started(engine) { app, clock in
            func send(_ method: HTTPMethod, _ path: String, bearer: String? = nil, _ body: [(String, JSONValue)]) async throws -> Reply {
                try await app.send(method, path, bearer: bearer, headers: Self.fromPhone, body: JSONWriter.string(.object(JSONObject(body))))
            }
            let password = "correct horse battery"
            let made = try await send(.post, "/api/auth/password/sign-up", [("email", .string("ada@example.com")), ("password", .string(password))])
            #expect(made.status == 201, "\(made.body)")
            let userID = try #require(made.json?["user"]?.object?["id"]?.string)
            let token = try #require(made.json?["session"]?.object?["token"]?.string)
            // A wrong password for a known email; an unknown email records nothing.
            #expect(try await send(.post, "/api/auth/password", [("email", .string("ada@example.com")), ("password", .string("wrong horse battery"))]).status == 401)
            #expect(try await send(.post, "/api/auth/password", [("email", .string("nobody@example.com")), ("password", .string(password))]).status == 401)
            clock.advance(by: 60)
            let signedIn = try await send(.post, "/api/auth/password", [("email", .string("ada@example.com")), ("password", .string(password))])
            #expect(signedIn.status == 200)
            #expect(try await send(.put, "/api/account/password", bearer: token, [("current_password", .string(password)), ("new_password", .string("staple battery horse correct"))]).status == 204)

            let events = try await Self.events(app, "user_id=" + userID)
            #expect(Self.types(events) == ["session.ended", "password.changed", "sign_in.succeeded", "sign_in.failed", "sign_in.succeeded", "user.created"])
            #expect(events[0]["detail"] == .object(JSONObject([("reason", .string("password_changed"))])))
            #expect(events[2]["detail"] == .object(JSONObject([("method", .string("password")), ("created", .bool(false))])))
            #expect(events[3]["detail"] == .object(JSONObject([("method", .string("password")), ("reason", .string("invalid_credentials"))])))
            #expect(events[4]["detail"] == .object(JSONObject([("method", .string("password")), ("created", .bool(true))])))
            #expect(events[5]["detail"] == .object(JSONObject([("method", .string("password"))])))
            #expect(events.allSatisfy { $0["ip"]?.string == Self.client && $0["user_agent"]?.string == Self.userAgent })
            #expect(try await Self.events(app).count == events.count, "the unknown email recorded nothing")
        }
    }

    // MARK: - Reading

    @Test(arguments: DatabaseEngine.available)
    func aPersonReadsTheirOwnActivityOnly(_ engine: DatabaseEngine) async throws {
        try await Self.started(engine) { app, clock in
            let ada = try await Self.signIn(app, sub: Self.sub(5), nonce: "n-1")
            let bob = try await Self.signIn(app, sub: Self.sub(6), nonce: "n-2")
            for n in 0..<3 {
                clock.advance(by: 1)
                _ = try await Self.signIn(app, sub: Self.sub(5), nonce: "n-a\(n)")
            }
            let reply = try await app.send(.get, "/api/account/activity", bearer: ada.token)
            #expect(reply.status == 200)
            #expect(reply.headers["cache-control"] == "no-store")
            let page = try #require(reply.json?["events"]?.array).compactMap(\.object)
            #expect(page.count == 5)
            #expect(page.allSatisfy { $0["user_id"]?.string == ada.userID })
            #expect(reply.json?["next_cursor"] == .null)

            // Two at a time, newest first, through the cursor.
            var seen: [String] = []
            var cursor: String?
            repeat {
                let next = try await app.send(.get, "/api/account/activity?limit=2" + (cursor.map { "&cursor=" + $0 } ?? ""), bearer: ada.token)
                seen += try #require(next.json?["events"]?.array).compactMap { $0.object?["id"]?.string }
                cursor = next.json?["next_cursor"]?.string
            } while cursor != nil
            #expect(seen == page.compactMap { $0["id"]?.string })

            // A user id in the query is not a way into another's timeline: refused.
            #expect(try await app.send(.get, "/api/account/activity?user_id=" + bob.userID, bearer: ada.token).status == 400)
            let bobs = try #require(try await app.send(.get, "/api/account/activity", bearer: bob.token).json?["events"]?.array)
            #expect(bobs.count == 2)
            #expect(try await app.send(.get, "/api/account/activity").status == 401)
            for bad in ["limit=0", "limit=101", "limit=x", "cursor=nope", "cursor=" + AuditCursor(at: 1, seq: 1).encoded + "x", "limit=1&limit=2"] {
                let refused = try await app.send(.get, "/api/account/activity?" + bad, bearer: ada.token)
                #expect(refused.status == 400, "\(bad)")
                #expect(refused.json?["error"]?.string == "invalid_request")
            }
        }
    }

    @Test func adminEventsNeedTheTokenAndFilter() async throws {
        try await Self.started(.sqlite) { app, clock in
            let start = clock.now
            let ada = try await Self.signIn(app, sub: Self.sub(7), nonce: "n-1")
            clock.advance(by: 120)
            _ = try await Self.signIn(app, sub: Self.sub(8), nonce: "n-2")
            #expect(try await app.send(.get, "/admin/events").status == 401)
            #expect(try await app.send(.get, "/admin/events", bearer: "adm-wrong-0123456789abcdef0123456789").status == 401)

            #expect(Self.types(try await Self.events(app, "type=sign_in.")) == ["sign_in.succeeded", "sign_in.succeeded"])
            #expect(Self.types(try await Self.events(app, "type=user.created")) == ["user.created", "user.created"])
            #expect(try await Self.events(app, "type=nothing.").isEmpty)
            #expect(try await Self.events(app, "user_id=" + ada.userID).count == 2)
            let later = RFC3339.format(start + 60)
            #expect(try await Self.events(app, "since=" + later).count == 2)
            #expect(try await Self.events(app, "until=" + later).allSatisfy { $0["user_id"]?.string == ada.userID })
            #expect(try await Self.events(app, "since=" + later + "&until=" + later).isEmpty)
            for bad in ["limit=201", "since=yesterday", "until=2026-13-01T00:00:00Z", "type=", "colour=red"] {
                #expect(try await app.send(.get, "/admin/events?" + bad, bearer: Self.adminToken).status == 400, "\(bad)")
            }
        }
    }

    @Test func withoutTheAdminTokenThereIsNoEventsRoute() async throws {
        let clock = HeldClock()
        try await withApp(clock: clock, configure: { $0.clientIDs = [Self.app] }) { app in
            let reply = try await app.send(.get, "/admin/events", bearer: Self.adminToken)
            #expect(reply.status == 404)
        }
    }

    // MARK: - Retention

    /// A store of its own, with no application (whose housekeeping would prune beside the test's).
    static func withStore(_ engine: DatabaseEngine, _ body: (Store) async throws -> Void) async throws {
        var folder: String?
        let location: String
        switch engine {
        case .sqlite:
            let path = NSTemporaryDirectory() + "siwa-audit-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            folder = path
            location = path + "/siwa.sqlite3"
        case .postgres:
            location = try await PostgresCluster.shared().makeDatabase()
        }
        let store = try Store.open(location, connections: 2) { [UInt8](repeating: 7, count: 32) }
        defer {
            store.close()
            if let folder { try? FileManager.default.removeItem(atPath: folder) }
        }
        try await body(store)
    }

    static func insertEvents(_ store: Store, count: Int, at time: Int64) async throws {
        try await store.write { connection in
            for n in 0..<count {
                try connection.run(
                    "INSERT INTO events(id, at, type, actor, detail) VALUES (?, ?, 'sign_in.failed', 'user', '{}')", [.text("evt_\(time)_\(n)"), .integer(time)])
            }
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func housekeepingPrunesEventsPastTheRetention(_ engine: DatabaseEngine) async throws {
        try await Self.withStore(engine) { store in
            let clock = HeldClock(1_800_000_000)
            try await Self.insertEvents(store, count: 2_500, at: clock.now - 365 * 86_400)
            try await Self.insertEvents(store, count: 2, at: clock.now)
            let housekeeping = Housekeeping(store: store, idleTTL: 3_600, logger: Logger(label: "test"), clock: clock.read, auditRetention: 180 * 86_400)
            #expect(await housekeeping.runOnce() == 2_500)
            #expect(try await store.audit.count() == 2)
            // The two go once they are past the retention themselves.
            clock.advance(by: 180 * 86_400)
            #expect(try await housekeeping.pruneAudit() == 0)
            clock.advance(by: 1)
            #expect(try await housekeeping.pruneAudit() == 2)
            #expect(try await store.audit.count() == 0)
        }
    }

    @Test func aBacklogIsPrunedAtMostABoundedAmountPerPass() async throws {
        try await Self.withStore(.sqlite) { store in
            let clock = HeldClock(1_800_000_000)
            let backlog = Housekeeping.auditBatch * Housekeeping.auditBatchesPerPass + 10
            try await Self.insertEvents(store, count: backlog, at: clock.now - 365 * 86_400)
            let housekeeping = Housekeeping(store: store, idleTTL: 3_600, logger: Logger(label: "test"), clock: clock.read)
            let first = try await housekeeping.pruneAudit()
            #expect(first == backlog - 10)
            let second = try await housekeeping.pruneAudit()
            #expect(second == 10)
        }
    }
}

extension AuditTrailTests {
    @Test func auditRetentionIs180DaysUnlessSet() throws {
        #expect(try Configuration.load(file: nil, environment: [:], isTerminal: false).auditRetention == .seconds(180 * 86_400))
        let set = try Configuration.load(file: nil, environment: ["SIWA_AUDIT_RETENTION": "30d"], isTerminal: false)
        #expect(set.auditRetention == .seconds(30 * 86_400))
        #expect(set.summary().contains { $0.key == "audit_retention" && $0.value == "30d" })
    }
}

extension AuditTrailTests {
    /// `siwa-server events`: the same events as `/admin/events`, one line each or as JSON.
    @Test func theCommandLineListsTheEvents() async throws {
        try await Self.started(.sqlite) { app, _ in
            let ada = try await Self.signIn(app, sub: Self.sub(10), nonce: "n-1")
            _ = try await Self.signIn(app, sub: Self.sub(11), nonce: "n-2")
            let administration = try UserAdministration.open(app.configuration, json: false, logger: Logger(label: "test"), clock: app.clock!.read)
            defer { administration.close() }
            let text = try await administration.events(userID: ada.userID, typePrefix: "sign_in.", since: "1h", limit: 10)
            #expect(text.exitCode == 0)
            let lines = text.text.split(separator: "\n")
            #expect(lines.count == 1)
            #expect(lines.first?.contains("sign_in.succeeded  \(ada.userID)  user  \(Self.client)  {\"method\":\"apple\",\"created\":true}") == true)
            let asJSON = try UserAdministration.open(app.configuration, json: true, logger: Logger(label: "test"))
            defer { asJSON.close() }
            let json = try await asJSON.events(userID: nil, typePrefix: nil, since: nil, limit: 3)
            let page = try #require(try JSONParser.parse(json.text).object)
            #expect(page["events"]?.array?.count == 3)
            #expect(page["next_cursor"]?.string != nil)
            #expect(UserAdministration.problem(eventLimit: 0, since: nil) != nil)
            #expect(UserAdministration.problem(eventLimit: 10, since: "last week") != nil)
            #expect(UserAdministration.problem(eventLimit: 10, since: "2026-11-22T10:00:00Z") == nil)
            #expect(UserAdministration.since("2h", now: 10_000) == 2_800)
        }
    }
}

// MARK: - Sessions know where they came from

extension AuditTrailTests {
    @Test(arguments: DatabaseEngine.available)
    func sessionsShowHowAndFromWhereTheyWereMade(_ engine: DatabaseEngine) async throws {
        try await Self.started(engine) { app, _ in
            let ada = try await Self.signIn(app, sub: Self.sub(12), nonce: "n-1")
            let listed = try #require(try await app.send(.get, "/api/sessions", bearer: ada.token).json?["sessions"]?.array?.first?.object)
            #expect(listed["method"]?.string == "apple")
            #expect(listed["ip"]?.string == Self.client)
            #expect(listed["user_agent"]?.string == Self.userAgent)
            let shown = try #require(try await app.send(.get, "/admin/users/" + ada.userID, bearer: Self.adminToken).json?["sessions"]?.array?.first?.object)
            #expect(shown["method"] == listed["method"] && shown["ip"] == listed["ip"] && shown["user_agent"] == listed["user_agent"])
            let page = try await app.send(.get, "/account", bearer: ada.token)
            #expect(page.status == 200)
            #expect(page.body.contains("Sign in with Apple · \(Self.client)") && page.body.contains(Self.userAgent))
            // A session made before sessions knew, or without a request, shows nulls.
            let older = try await app.session(sub: Self.sub(13))
            let bare = try #require(try await app.send(.get, "/api/sessions", bearer: older).json?["sessions"]?.array?.first?.object)
            #expect(bare["method"] == .null && bare["ip"] == .null && bare["user_agent"] == .null)
        }
    }

    @Test func sessionWebhooksSayWhenSessionsAreMadeAndEnded() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        try await withApp(configure: {
            Self.configure(&$0)
            $0.webhookURL = receiver.url
            $0.webhookSecret = receiver.secretBytes
        }) { app in
            try await app.waitUntilReady()
            let ada = try await Self.signIn(app, sub: Self.sub(14), nonce: "n-1")
            #expect(try await app.send(.post, "/api/logout", bearer: ada.token).status == 204)
            #expect(await receiver.wait { $0.contains { $0.type == "session.ended" } })
            let sessions = receiver.deliveries.filter { $0.type.hasPrefix("session.") }
            #expect(sessions.map(\.type) == ["session.created", "session.ended"])
            let created = try #require(sessions.first?.json?["data"] as? [String: Any])
            let ended = try #require(sessions.last?.json?["data"] as? [String: Any])
            #expect(Set(created.keys) == ["id", "user_id", "method", "device_name"])
            #expect(created["user_id"] as? String == ada.userID && created["method"] as? String == "apple")
            #expect(Set(ended.keys) == ["id", "user_id", "reason"])
            #expect(ended["id"] as? String == created["id"] as? String && ended["reason"] as? String == "logout")
            #expect(sessions.allSatisfy { $0.signatureVerifies })
        }
    }
}
