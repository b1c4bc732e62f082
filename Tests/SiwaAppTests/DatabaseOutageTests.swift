import AppleSimulator
import Foundation
import HTTPServer
import JSON
@testable import Store
import Testing
import TestSupport
@testable import SiwaApp

/// docs/reference/http-api.md "Database trouble is 503, everywhere", in process on both engines: with
/// PostgreSQL stopped, or SQLite's write lock held by another connection past the busy timeout,
/// every route that needs the database answers 503 `database_unavailable` (a page route a 503
/// page), nothing changes, and once the database is back everything works without a restart.
/// A reset request needs no database before its answer (its work runs after it): 202.
/// A sign-in whose code Apple exchanged but whose result could not be stored gets Apple's new
/// tokens revoked: through the queue, at Apple at once when the queue is down too, or held in
/// memory until the database returns when Apple is down as well.
@Suite(.timeLimit(.minutes(3)))
struct DatabaseOutageTests {
    typealias Engine = DatabaseEngine

    static let app = "com.example.outage"
    /// The web flow's Services ID (its codes are exchanged with `redirect_uri`, native ones not).
    static let web = "com.example.outage.web"
    static let adminToken = "admin-0123456789abcdefghijklmnopqrstuv"
    static let dataKey = [UInt8](repeating: 5, count: 32)

    struct Reply {
        let status: Int
        let head: String
        let body: String
        var json: JSONObject? { try? JSONParser.parse(body).object }
        var error: String? { json?["error"]?.string }
        var isPage: Bool { head.lowercased().contains("content-type: text/html") }
    }

    final class Fixture: Stoppable {
        let harness: TestApp
        let engine: Engine
        /// A cluster of this test's own, for a test that stops it.
        let cluster: PostgresCluster?

        init(
            _ engine: Engine, transport: Transport = .inProcess, ownCluster: Bool = false,
            configure: @escaping (inout Configuration) -> Void = { _ in }
        ) async throws {
            self.engine = engine
            var url: String?
            if engine == .postgres {
                let cluster = ownCluster ? try await PostgresCluster.start() : try await PostgresCluster.shared()
                url = try await cluster.makeDatabase()
                self.cluster = ownCluster ? cluster : nil
            } else {
                cluster = nil
            }
            harness = try await TestApp(transport: transport) {
                $0.clientIDs = [DatabaseOutageTests.app, DatabaseOutageTests.web]
                $0.webClientID = DatabaseOutageTests.web
                $0.adminToken = DatabaseOutageTests.adminToken
                // Resets need a receiver; nothing listens there (the outbox only fills).
                $0.webhookURL = "http://127.0.0.1:9/siwa-events"
                $0.webhookSecret = [UInt8](repeating: 3, count: 32)
                // A write waits this long for another connection's lock, then gives up.
                $0.databaseBusyTimeout = .milliseconds(200)
                $0.rateLimit = nil
                if let url {
                    $0.database = url
                    $0.dataKey = DatabaseOutageTests.dataKey
                }
                configure(&$0)
            }
            _ = try await harness.waitUntilReady()
        }

        var simulator: AppleIDSimulator { harness.simulator }
        var store: Store { harness.application.store }

        func send(
            _ method: String, _ path: String, bearer: String? = nil, headers: [(String, String)] = [], body: String = "",
            contentType: String = "application/json"
        ) async throws -> Reply {
            let fields = (body.isEmpty ? [] : [("Content-Type", contentType)]) + headers
            let reply = try await harness.send(HTTPMethod(method), path, bearer: bearer, headers: fields, body: body)
            let head = (["HTTP/1.1 \(reply.status)"] + reply.fields.map { "\($0.name): \($0.value)" }).joined(separator: "\r\n")
            return Reply(status: reply.status, head: head, body: reply.body)
        }

        func post(_ path: String, _ fields: [(String, JSONValue)], bearer: String? = nil) async throws -> Reply {
            try await send("POST", path, bearer: bearer, body: JSONWriter.string(.object(JSONObject(fields))))
        }

        /// A native sign-in's body for `sub`: the token (with nonce `n`) and, with `withCode`,
        /// its authorization code; `nonce: false` for a token without one (`require_nonce` off).
        func signInBody(sub: String, withCode: Bool = false, nonce: Bool = true) throws -> [(String, JSONValue)] {
            let issued = try simulator.issueCode(sub: sub, clientID: DatabaseOutageTests.app, nonce: nonce ? "n" : nil)
            var body: [(String, JSONValue)] = [("identity_token", .string(issued.identityToken))]
            if nonce { body.append(("nonce", .string("n"))) }
            if withCode { body.append(("authorization_code", .string(issued.code))) }
            return body
        }

        /// Signs in `sub`; its session token and user id.
        func signIn(sub: String) async throws -> (session: String, userID: String) {
            let reply = try await post("/api/auth/apple", try signInBody(sub: sub))
            return (try #require(reply.json?["session"]?.object?["token"]?.string, "\(reply.body)"),
                    try #require(reply.json?["user"]?.object?["id"]?.string))
        }

        /// The rows of every table that a request could add to or remove from.
        func counts() async throws -> [String: Int] {
            try await store.engine.read { connection in
                var counts: [String: Int] = [:]
                for table in DatabaseOutageTests.tables {
                    counts[table] = try connection.queryOne("SELECT COUNT(*) FROM \(table)")?.int(0) ?? -1
                }
                return counts
            }
        }

        /// Runs SQL of the test's own in one write (triggers that stand in for a fault).
        func execute(_ statements: [String]) async throws {
            try await store.engine.write { connection in
                for sql in statements { try connection.run(sql) }
            }
        }

        /// Asks `/api/me` with `session` until it answers `status`, for at most 10 s.
        func me(_ session: String, becomes status: Int) async throws -> Bool {
            try await eventually(within: .seconds(10)) { try await send("GET", "/api/me", bearer: session).status == status }
        }

        var tokenCalls: Int { simulator.calls.filter { $0.endpoint == "token" }.count }
        var revokeCalls: [SimulatorCall] { simulator.calls.filter { $0.endpoint == "revoke" } }

        func stop() async {
            await harness.stop()
            try? await cluster?.stop()
        }
    }

    static let tables = [
        "users", "sessions", "apple_tokens", "issued_nonces", "used_identity_tokens", "pending_profiles", "web_sign_ins",
        "app_return_codes", "password_credentials", "password_attempts", "password_reset_codes", "revocations", "notifications",
        "webhook_events",
    ]

    static func sub(_ n: Int) -> String { "000910.\(String(repeating: "0", count: 28))\(1000 + n).0910" }

    /// The writes of a sign-in and of the revocation queue fail as when the database goes away
    /// between Apple's exchange and the commit: SQLite's write lock held by another connection;
    /// on PostgreSQL, triggers that end their own connection whenever a row goes into `sessions`
    /// or `revocations`. Returns what mends it.
    static func failSignInsAndTheQueue(_ fixture: Fixture) async throws -> () async throws -> Void {
        if fixture.engine == .sqlite {
            let lock = try WriteLock(path: fixture.harness.application.configuration.database)
            return { try lock.release() }
        }
        let tables = ["sessions", "revocations"]
        try await fixture.execute(
            ["CREATE FUNCTION test_outage() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$"]
                + tables.map { "CREATE TRIGGER test_outage BEFORE INSERT ON \($0) FOR EACH ROW EXECUTE FUNCTION test_outage()" })
        return { try await fixture.execute(tables.map { "DROP TRIGGER test_outage ON \($0)" } + ["DROP FUNCTION test_outage()"]) }
    }

    // MARK: - Every route

    /// A representative request of every route that needs the database (every one on
    /// PostgreSQL, where reads fail too; on SQLite the writes, reads going on under the lock),
    /// each answered 503 `database_unavailable` or, on a page route, a 503 page; nothing
    /// changed, no code went to Apple, and afterwards everything works again.
    @Test(arguments: Engine.available)
    func everyRouteThatNeedsTheDatabaseAnswers503(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine, ownCluster: true)) { fixture in
            let (session, userID) = try await fixture.signIn(sub: Self.sub(1))
            let made = try await fixture.post(
                "/api/auth/password/sign-up", [("email", .string("ada@example.com")), ("password", .string("correct horse battery"))])
            let passwordSession = try #require(made.json?["session"]?.object?["token"]?.string, "\(made.body)")
            let notification = try fixture.simulator.notificationPayload(NotificationEvent(type: "email-disabled", sub: Self.sub(1), clientID: Self.app))
            let before = try await fixture.counts()
            let tokenCalls = fixture.tokenCalls

            // (label, request, whether a page answers)
            typealias Request = (label: String, send: () async throws -> Reply, page: Bool)
            let writes: [Request] = [
                ("native sign-in", { try await fixture.post("/api/auth/apple", try fixture.signInBody(sub: Self.sub(2))) }, false),
                ("native sign-in with a code", {
                    try await fixture.post("/api/auth/apple", try fixture.signInBody(sub: Self.sub(3), withCode: true))
                }, false),
                ("nonce", { try await fixture.send("POST", "/api/auth/apple/nonce") }, false),
                ("logout", { try await fixture.send("POST", "/api/logout", bearer: session) }, false),
                ("end a session", { try await fixture.send("DELETE", "/api/sessions/ses_none", bearer: session) }, false),
                ("delete the account", { try await fixture.send("DELETE", "/api/account", bearer: session) }, false),
                ("password sign-in", {
                    try await fixture.post("/api/auth/password", [("email", .string("ada@example.com")), ("password", .string("correct horse battery"))])
                }, false),
                ("password sign-up", {
                    try await fixture.post("/api/auth/password/sign-up", [("email", .string("bo@example.com")), ("password", .string("correct horse battery"))])
                }, false),
                ("set a password", {
                    try await fixture.send(
                        "PUT", "/api/account/password", bearer: passwordSession,
                        body: #"{"current_password":"correct horse battery","new_password":"another horse battery"}"#)
                }, false),
                ("exchange", { try await fixture.post("/api/auth/exchange", [("code", .string("c")), ("code_verifier", .string("v"))]) }, false),
                ("notification", { try await fixture.post("/apple/notifications", [("payload", .string(notification))]) }, false),
                ("admin: set external_id", {
                    try await fixture.send("PATCH", "/admin/users/\(userID)", bearer: Self.adminToken, body: #"{"external_id":"crm-1"}"#)
                }, false),
                ("admin: end sessions", { try await fixture.send("DELETE", "/admin/users/\(userID)/sessions", bearer: Self.adminToken) }, false),
                ("admin: delete", { try await fixture.send("DELETE", "/admin/users/\(userID)", bearer: Self.adminToken) }, false),
                ("web login", { try await fixture.send("GET", "/auth/apple/login") }, true),
                ("web callback", {
                    try await fixture.send(
                        "POST", "/auth/apple/callback", body: "state=s&id_token=t&code=c", contentType: "application/x-www-form-urlencoded")
                }, true),
            ]
            let reads: [Request] = [
                ("me", { try await fixture.send("GET", "/api/me", bearer: session) }, false),
                ("sessions", { try await fixture.send("GET", "/api/sessions", bearer: session) }, false),
                ("access token", { try await fixture.send("POST", "/api/token", bearer: session) }, false),
                ("forward auth", { try await fixture.send("GET", "/auth/verify", bearer: session) }, false),
                ("admin: list", { try await fixture.send("GET", "/admin/users", bearer: Self.adminToken) }, false),
                ("admin: show", { try await fixture.send("GET", "/admin/users/\(userID)", bearer: Self.adminToken) }, false),
                ("account page", { try await fixture.send("GET", "/account", headers: [("Cookie", "siwa_session=\(session)")]) }, true),
            ]

            var lock: WriteLock?
            if engine == .sqlite {
                lock = try WriteLock(path: fixture.harness.application.configuration.database)
            } else {
                try await #require(fixture.cluster).pause()
                // The session cache stops serving once its listener has lost the database.
                #expect(try await fixture.me(session, becomes: 503))
            }
            for request in writes + (engine == .postgres ? reads : []) {
                let reply = try await request.send()
                #expect(reply.status == 503, "\(request.label): \(reply.body)")
                if request.page {
                    #expect(reply.isPage, "\(request.label)")
                } else {
                    #expect(reply.error == "database_unavailable", "\(request.label): \(reply.body)")
                }
            }
            // Not a 503: a reset request is answered before its email is looked up, so that a
            // known email and an unknown one take the same time (docs/guides/passwords-and-email.md). It answers 202 as
            // always; its work fails after the answer (counted, logged), nothing changes, and the
            // person asks again. Waiting for that work keeps it from meeting the database's return.
            let emailRequests = fixture.harness.application.emailRequests
            let resetRequest = try await fixture.post("/api/auth/password/reset-request", [("email", .string("ada@example.com"))])
            #expect(resetRequest.status == 202, "reset request: \(resetRequest.body)")
            await emailRequests.idle()
            #expect(emailRequests.outcomes.count("failed") == 1)
            if let lock {
                // WAL: readers do not wait for the writer's lock.
                for request in reads {
                    #expect((200..<300).contains(try await request.send().status), "\(request.label) reads on")
                }
                try lock.release()
            } else {
                try await #require(fixture.cluster).resume()
                #expect(try await fixture.me(session, becomes: 200), "the pool reconnected by itself")
            }

            #expect(try await fixture.counts() == before, "nothing changed")
            #expect(fixture.tokenCalls == tokenCalls, "no code went to Apple")
            let again = try await fixture.post("/api/auth/apple", try fixture.signInBody(sub: Self.sub(2)))
            #expect(again.status == 200, "\(again.body)")
            #expect(again.json?["created"] == .bool(true), "the refused sign-in had created nothing")
        }
    }

    // MARK: - Apple's fresh tokens

    /// The database fails after Apple exchanged the code, the revocation queue too (SQLite:
    /// locked; PostgreSQL: each write's connection dies): 503, nothing kept, and Apple's new
    /// grant is revoked at Apple within the request.
    /// The socket sample.
    @Test(arguments: Engine.available, Transport.allCases)
    func freshTokensAreRevokedAtAppleWhenNeitherTheSignInNorTheQueueCanBeStored(_ engine: Engine, _ transport: Transport) async throws {
        try await withFixture(Fixture(engine, transport: transport) { $0.requireNonce = false }) { fixture in
            let mend = try await Self.failSignInsAndTheQueue(fixture)

            let reply = try await fixture.post("/api/auth/apple", try fixture.signInBody(sub: Self.sub(10), withCode: true, nonce: false))
            #expect(reply.status == 503, "\(reply.body)")
            #expect(reply.error == "database_unavailable")
            #expect(fixture.tokenCalls == 1, "Apple exchanged the code")
            let revoked = fixture.revokeCalls
            #expect(revoked.count == 1, "revoked at Apple before the answer")
            #expect(revoked.first?.parameters["token_type_hint"] == "refresh_token")
            #expect(revoked.first?.parameters["client_id"] == Self.app)
            #expect(fixture.harness.application.revoker.held.count == 0)

            try await mend()
            let counts = try await fixture.counts()
            #expect(counts["users"] == 0 && counts["sessions"] == 0 && counts["apple_tokens"] == 0)
            #expect(counts["revocations"] == 0, "nothing left to revoke")
            let again = try await fixture.post("/api/auth/apple", try fixture.signInBody(sub: Self.sub(10), withCode: true, nonce: false))
            #expect(again.status == 200, "\(again.body)")
        }
    }

    /// As above with Apple failing too: the tokens are held in memory, go into the durable
    /// queue as soon as the database takes writes again, and the queue's worker revokes them.
    @Test(arguments: Engine.available)
    func freshTokensHeldWhileAppleIsDownTooAreQueuedAndRevokedWhenTheDatabaseReturns(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine) { $0.requireNonce = false }) { fixture in
            let mend = try await Self.failSignInsAndTheQueue(fixture)
            fixture.simulator.injectFault(SimulatorFault(endpoint: .revoke, status: 503, count: 1_000))

            let reply = try await fixture.post("/api/auth/apple", try fixture.signInBody(sub: Self.sub(11), withCode: true, nonce: false))
            #expect(reply.status == 503, "\(reply.body)")
            #expect(reply.error == "database_unavailable")
            let revoker = fixture.harness.application.revoker
            #expect(revoker.held.count == 1, "held until the database returns")

            fixture.simulator.clearFaults()
            let failedCalls = fixture.revokeCalls.count
            try await mend()
            // The worker looks every second: it queues what is held, then revokes what is due.
            var depth = -1
            _ = try await eventually(within: .seconds(60)) {
                depth = try await fixture.store.revocations.depth().count
                return revoker.held.count == 0 && depth == 0 && fixture.revokeCalls.count > failedCalls
            }
            #expect(revoker.held.count == 0)
            #expect(depth == 0, "revoked, and gone from the queue")
            let revoked = fixture.revokeCalls.dropFirst(failedCalls)
            #expect(revoked.count == 1)
            #expect(revoked.first?.parameters["token_type_hint"] == "refresh_token")
            #expect(try await fixture.counts()["users"] == 0)
        }
    }

    /// Storing fails for another reason than an outage (a trigger refuses the session): a 500,
    /// nothing kept, and the tokens go into the durable queue, whose worker revokes them.
    @Test(arguments: Engine.available)
    func freshTokensOfASignInThatCouldNotBeStoredGoToTheQueue(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine) { $0.requireNonce = false }) { fixture in
            switch engine {
            case .sqlite:
                try await fixture.execute(["CREATE TRIGGER test_refuse BEFORE INSERT ON sessions BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"])
            case .postgres:
                try await fixture.execute([
                    "CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$",
                    "CREATE TRIGGER test_refuse BEFORE INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION test_refuse()",
                ])
            }
            let reply = try await fixture.post("/api/auth/apple", try fixture.signInBody(sub: Self.sub(12), withCode: true, nonce: false))
            #expect(reply.status == 500, "\(reply.body)")
            #expect(reply.error == "internal_error")

            _ = try await eventually(within: .seconds(60)) { !fixture.revokeCalls.isEmpty }
            #expect(fixture.revokeCalls.count == 1)
            #expect(fixture.revokeCalls.first?.parameters["token_type_hint"] == "refresh_token")
            let counts = try await fixture.counts()
            #expect(counts["users"] == 0 && counts["sessions"] == 0 && counts["apple_tokens"] == 0)
        }
    }
}
