import AppleSimulator
import Foundation
import JSON
import Store
import Synchronization
import Testing
import TestSupport
@testable import SiwaApp
@testable import Store

/// siwa-server on PostgreSQL (docs/guides/postgresql.md): two instances on one database behave as one, and a
/// database that goes away gives clean 503s and comes back without a restart.
@Suite(
    .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"),
    .timeLimit(.minutes(2)))
struct PostgresInstancesTests {
    static let app = "com.example.pg"
    static let dataKey = [UInt8](repeating: 7, count: 32)

    /// An instance on `url`, trusting `simulator` (the other instance's, when given).
    static func instance(
        url: String, sharing simulator: AppleIDSimulator? = nil, configure: @escaping (inout Configuration) -> Void = { _ in }
    ) async throws -> TestApp {
        let harness = try await TestApp(transport: .socket) {
            configure(&$0)
            $0.database = url
            $0.dataKey = Self.dataKey
            $0.clientIDs = [Self.app]
            if let simulator {
                $0.appleBaseURL = simulator.baseURL
                $0.teamID = simulator.teamID
                $0.keyID = simulator.keyID
                $0.privateKeyPEM = simulator.developerKeyPEM
            }
        }
        _ = try await harness.waitUntilReady()
        return harness
    }

    static func signIn(_ harness: TestApp, simulator: AppleIDSimulator, sub: String) async throws -> String {
        try await signIn(harness, simulator: simulator, sub: sub, withCode: false).session
    }

    /// A native sign-in; with its authorization code, Apple's tokens are stored (and revoked
    /// when the account is deleted). The session token and the user id.
    static func signIn(
        _ harness: TestApp, simulator: AppleIDSimulator, sub: String, withCode: Bool
    ) async throws -> (session: String, userID: String) {
        let issued = try simulator.issueCode(sub: sub, clientID: app, nonce: "n")
        var fields: [(String, JSONValue)] = [("identity_token", .string(issued.identityToken)), ("nonce", .string("n"))]
        if withCode { fields.append(("authorization_code", .string(issued.code))) }
        let body = JSONWriter.string(.object(JSONObject(fields)))
        let reply = try await HTTPGet.raw(
            port: harness.application.port,
            "POST /api/auth/apple HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let json = try JSONParser.parse(reply.components(separatedBy: "\r\n\r\n").dropFirst().joined()).object
        let session = try #require(json?["session"]?.object?["token"]?.string, "\(reply)")
        return (session, try #require(json?["user"]?.object?["id"]?.string))
    }

    static func me(_ harness: TestApp, _ session: String, path: String = "/api/me") async throws -> Int {
        try await harness.get(path, headers: ["Authorization": "Bearer \(session)"]).status
    }

    /// Uses `session` on `harness` until its cache holds it (every answer a success), so that
    /// what follows is about a cached session. A few uses may be needed: the instance's own
    /// writes (housekeeping, last-seen) drop what reads stored while they committed.
    static func cached(on harness: TestApp, _ session: String, path: String = "/api/me") async throws -> Bool {
        var refused = false
        let cached = try await eventually {
            guard (200..<300).contains(try await me(harness, session, path: path)) else {
                refused = true
                return true
            }
            return harness.application.store.sessions.cachedCount > 0
        }
        return cached && !refused
    }

    /// docs/guides/postgresql.md: a session ended anywhere is refused everywhere, told through NOTIFY. The
    /// second docs/guides/postgresql.md allows is a latency a loaded machine cannot promise a test; what is
    /// tested is that the end reaches the other instance's cache at all (without it, the cache
    /// would serve the session for ever).
    static func refusedOnceTold(_ harness: TestApp, _ session: String, path: String = "/api/me") async throws -> Bool {
        try await eventually { try await me(harness, session, path: path) == 401 }
    }

    static func post(_ harness: TestApp, _ path: String, _ body: [(String, JSONValue)], bearer: String? = nil) async throws
        -> (status: Int, json: JSONObject?)
    {
        let text = JSONWriter.string(.object(JSONObject(body)))
        let authorization = bearer.map { "Authorization: Bearer \($0)\r\n" } ?? ""
        let reply = try await HTTPGet.raw(
            port: harness.application.port,
            "POST \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\(authorization)Content-Type: application/json\r\nContent-Length: \(text.utf8.count)\r\n\r\n\(text)")
        let status = Int(reply.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, try? JSONParser.parse(reply.components(separatedBy: "\r\n\r\n").dropFirst().joined()).object)
    }

    /// docs/guides/passwords-and-email.md on several instances: the attempt limit of an email is one count in the database,
    /// not five per instance; and a sign-in method removed on one instance is gone from the
    /// other's cached user at once.
    @Test func passwordAttemptLimitsAndSignInMethodsAreSharedByInstances() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        try await withFixture(Self.instance(url: url)) { a in
            try await withFixture(Self.instance(url: url, sharing: a.simulator)) { b in
                let credentials: (String) -> [(String, JSONValue)] = { [("email", .string("ada@example.com")), ("password", .string($0))] }
                let made = try await Self.post(a, "/api/auth/password/sign-up", credentials("correct horse battery"))
                #expect(made.status == 201)
                for index in 0..<5 {
                    #expect(try await Self.post(index.isMultiple(of: 2) ? a : b, "/api/auth/password", credentials("wrong horse battery")).status == 401)
                }
                #expect(try await Self.post(a, "/api/auth/password", credentials("correct horse battery")).status == 429)
                #expect(try await Self.post(b, "/api/auth/password", credentials("correct horse battery")).status == 429)

                // Linked on A (the email proven first, docs/guides/passwords-and-email.md); B has the user cached with both
                // methods; the password removed on A.
                try await a.application.store.engine.write { _ = try $0.run("UPDATE password_credentials SET email_verified = 1", []) }
                let session = try #require(made.json?["session"]?.object?["token"]?.string)
                let sub = "000800.00000000000000000000000000000801.0800"
                let token = try a.simulator.issueCode(sub: sub, clientID: Self.app, nonce: "n").identityToken
                let linked = try await Self.post(a, "/api/account/apple", [("identity_token", .string(token)), ("nonce", .string("n"))], bearer: session)
                #expect(linked.status == 200, "\(String(describing: linked.json))")
                #expect(try await b.get("/api/me", headers: ["Authorization": "Bearer \(session)"]).body.contains(#""sign_in_methods":["apple","password"]"#))
                let removed = try await HTTPGet.raw(
                    port: a.application.port,
                    "DELETE /api/account/password HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(session)\r\nContent-Length: 0\r\n\r\n")
                #expect(removed.hasPrefix("HTTP/1.1 200"))
                let seen = try await eventually {
                    try await b.get("/api/me", headers: ["Authorization": "Bearer \(session)"]).body.contains(#""sign_in_methods":["apple"]"#)
                }
                #expect(seen, "B sees the password removed on A")
            }
        }
    }

    @Test func twoInstancesOnOneDatabaseShareSessionsAndTheirEnd() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        try await withFixture(Self.instance(url: url)) { a in
            try await withFixture(Self.instance(url: url, sharing: a.simulator)) { b in
                let sub = "000800.00000000000000000000000000000800.0800"

                let session = try await Self.signIn(a, simulator: a.simulator, sub: sub)
                #expect(try await Self.me(b, session) == 200, "a session made on A works on B")
                // Used on A, so A holds it in its cache.
                #expect(try await Self.cached(on: a, session))
                let logout = try await HTTPGet.raw(
                    port: b.application.port,
                    "POST /api/logout HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(session)\r\nContent-Length: 0\r\n\r\n")
                #expect(logout.hasPrefix("HTTP/1.1 204"))
                #expect(try await Self.refusedOnceTold(a, session), "ended on B, refused on A")

                // A notification delivered to A ends the sessions used (and cached) on B.
                let second = try await Self.signIn(b, simulator: a.simulator, sub: sub)
                #expect(try await Self.me(b, second) == 200)
                #expect(try await Self.me(b, second) == 200)
                let delivered = try await a.simulator.notify(
                    NotificationEvent(type: "consent-revoked", sub: sub, clientID: Self.app),
                    to: "http://127.0.0.1:\(a.application.port)/apple/notifications")
                #expect(delivered.status == 200)
                #expect(try await Self.refusedOnceTold(b, second))

            }
        }
    }

    /// An instance that dies holding a revocation's lease leaves it to the others once the
    /// lease is over, never before: the lease is the only thing that keeps two instances from
    /// sending one token twice. The dead instance is a Store that claims the row and closes;
    /// the live one runs on a held clock that the test moves past the lease.
    @Test func anotherInstanceFinishesADeadInstancesLeasedRevocationAfterTheLease() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        let clock = HeldClock(Int64(Date().timeIntervalSince1970))
        try await withApp(transport: .socket, clock: clock, configure: {
            $0.database = url
            $0.dataKey = Self.dataKey
            $0.clientIDs = [Self.app]
        }) { live in
            _ = try await live.waitUntilReady()
            let simulator = live.simulator
            let userID = try await Self.signIn(live, simulator: simulator, sub: "000807.00000000000000000000000000000807.0807", withCode: true).userID

            // The instance about to die deletes the user (the token is queued, due in 10 s by the
            // live clock), claims the revocation with the workers' lease, and is gone.
            let start = clock.now
            let dying = try Store.open(url, connections: 1) { Self.dataKey }
            _ = try await dying.deleteUser(userID: userID, now: start, firstAttemptAt: start + 10)
            let claimed = try await dying.revocations.claimDue(now: start + 10, lease: Revoker.lease)
            #expect(claimed.count == 1)
            dying.close()
            func revokeCalls() -> Int { simulator.calls.filter { $0.endpoint == "revoke" }.count }

            // Inside the lease the live instance leaves it alone: seen after two passes of its
            // worker are over (the one under way may have read the clock before it moved).
            clock.advance(by: 10 + Revoker.lease - 5)
            let revocations = live.application.metrics.revocations
            let passes = revocations.workerPasses
            #expect(try await eventually { revocations.workerPasses >= passes + 2 })
            #expect(revokeCalls() == 0, "leased to the dead instance")

            // Past the lease it is the live instance's, and Apple hears of it once.
            clock.advance(by: 10)
            _ = try await eventually { revokeCalls() > 0 }
            #expect(revokeCalls() == 1)
            // Apple logs the call before the worker records its answer: wait for the row to go.
            #expect(try await eventually { try await live.application.store.revocations.depth().count == 0 })
            #expect(revokeCalls() == 1, "and never sent again")
        }
    }

    /// Forward authentication on every instance (docs/guides/connecting-your-backend.md): a session signed in on A verifies on
    /// B from B's cache, and a sign-out on A is refused by B's `/auth/verify` (docs/guides/postgresql.md).
    @Test func forwardAuthenticationSeesASignOutOnAnotherInstance() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        try await withFixture(Self.instance(url: url)) { a in
            try await withFixture(Self.instance(url: url, sharing: a.simulator)) { b in
                let session = try await Self.signIn(a, simulator: a.simulator, sub: "000806.00000000000000000000000000000806.0806")
                #expect(try await Self.cached(on: b, session, path: "/auth/verify"), "B serves it from its cache")
                let logout = try await HTTPGet.raw(
                    port: a.application.port,
                    "POST /api/logout HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(session)\r\nContent-Length: 0\r\n\r\n")
                #expect(logout.hasPrefix("HTTP/1.1 204"))
                #expect(try await Self.refusedOnceTold(b, session, path: "/auth/verify"))
            }
        }
    }

    /// docs/guides/postgresql.md: an instance whose notification connection goes silent without breaking (its
    /// server process stopped here; a half-open network alike, where TCP notices a dead peer
    /// only after about a minute) stops serving sessions from memory within a second of its
    /// last confirmation: a session ended on the other instance is refused by `/auth/verify`,
    /// `/api/me` and `/api/token` while the stall lasts, and live sessions still work.
    @Test func aStalledNotificationConnectionStopsServingEndedSessions() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.makeDatabase()
        func listeners() async throws -> Set<Int32> {
            try await cluster.backendProcessIDs(database: url, applicationName: "siwa-server cache")
        }
        func until(_ condition: () async throws -> Bool) async throws -> Bool { try await eventually(within: .seconds(10), condition) }
        try await withFixture(Self.instance(url: url)) { a in
            #expect(try await until { try await listeners().count == 1 })
            let listenerOfA = try await listeners()
            try await withFixture(Self.instance(url: url, sharing: a.simulator)) { b in
                #expect(try await until { try await listeners().count == 2 })
                let stalled = try #require(try await listeners().subtracting(listenerOfA).first, "B's listener")

                let session = try await Self.signIn(a, simulator: a.simulator, sub: "000809.00000000000000000000000000000809.0809")
                let live = try await Self.signIn(a, simulator: a.simulator, sub: "000810.00000000000000000000000000000810.0810")
                func token(_ session: String) async throws -> Int {
                    try await HTTPGet.run(port: b.application.port, method: "POST", path: "/api/token", headers: ["Authorization": "Bearer \(session)"]).status
                }
                #expect(try await Self.cached(on: b, session, path: "/auth/verify"), "B serves it from its cache")
                #expect(try await Self.me(b, session) == 200)
                #expect(try await token(session) == 200)

                func outages(_ cause: String) async throws -> Int? {
                    let metrics = try await HTTPGet.run(port: b.application.port, path: "/metrics").body
                    let prefix = "siwa_session_cache_outages_total{cause=\"\(cause)\"} "
                    return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
                }
                let disconnectedBefore = try #require(try await outages("disconnected"), "PostgreSQL shows the cache's outages")

                #expect(kill(stalled, SIGSTOP) == 0)
                // Always let it go on, whatever happens here.
                defer { kill(stalled, SIGCONT) }
                let logout = try await HTTPGet.raw(
                    port: a.application.port,
                    "POST /api/logout HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(session)\r\nContent-Length: 0\r\n\r\n")
                #expect(logout.hasPrefix("HTTP/1.1 204"))
                let loggedOut = ContinuousClock.now
                // docs/guides/postgresql.md says 1 s; the bound is wider only so that a loaded machine's slow requests
                // cannot fail it. Without the confirmation the stall (held for the whole test) never ends.
                let refused = try await eventually(within: .seconds(10)) {
                    try await Self.me(b, session, path: "/auth/verify") == 401
                }
                print("PostgresInstancesTests: refused by B \(ContinuousClock.now - loggedOut) after the logout on A, its listener stalled")
                #expect(refused, "refused by B's /auth/verify while its listener is stalled")
                #expect(try await Self.me(b, session) == 401)
                #expect(try await token(session) == 401)
                // The stall lasts: the process is still stopped, and B answered without it.
                let state = try String(contentsOfFile: "/proc/\(stalled)/stat", encoding: .utf8).split(separator: ")").last?.split(separator: " ").first
                #expect(state == "T", "B's old listener is still stopped")
                #expect(try await Self.me(b, live) == 200, "a live session still works on B")
                #expect(try await token(live) == 200)
                // The listener gave the silent connection up: the outage is counted.
                #expect(try await until { try await outages("disconnected") ?? 0 > disconnectedBefore })

            }
        }
    }

    @Test func aStoppedDatabaseGives503sAndRecoversWithoutARestart() async throws {
        // A cluster of its own: pausing the shared one would fail other tests.
        let cluster = try await PostgresCluster.start()
        let url = try await cluster.makeDatabase()
        do {
            try await withFixture(Self.instance(url: url)) { harness in
                let session = try await Self.signIn(harness, simulator: harness.simulator, sub: "000801.00000000000000000000000000000801.0801")
                #expect(try await Self.me(harness, session) == 200)

                func metric(_ line: String) async throws -> Bool { try await harness.get("/metrics").body.contains("\n\(line)\n") }
                #expect(try await metric("siwa_session_cache_listening 1"))

                try await cluster.pause()
                let down = try await harness.get("/api/me", headers: ["Authorization": "Bearer \(session)"])
                #expect(down.status == 503)
                #expect(down.body.contains("database_unavailable"))
                let ready = try await harness.get("/readyz")
                #expect(ready.status == 503)
                #expect(ready.body.contains("database"))
                #expect(try await harness.get("/healthz").status == 200)
                #expect(try await eventually { try await metric("siwa_session_cache_listening 0") }, "the listener lost its connection")
                let disconnections = try await harness.get("/metrics").body.split(separator: "\n")
                    .first { $0.hasPrefix(#"siwa_session_cache_outages_total{cause="disconnected"} "#) }?.split(separator: " ").last.flatMap { Int($0) }
                #expect((disconnections ?? 0) >= 1, "and the outage is counted")

                try await cluster.resume()
                #expect(try await eventually { try await Self.me(harness, session) == 200 }, "the pool reconnected by itself")
                #expect(try await eventually { try await metric("siwa_session_cache_listening 1") }, "and the listener listens again")
            }
        } catch {
            try? await cluster.stop()
            throw error
        }
        try await cluster.stop()
    }

    /// Apple failing, then recovering, while two instances work one revocation queue: every
    /// token is revoked, and none twice (each failed call consumed one injected fault, so the
    /// calls are exactly the tokens plus the faults).
    @Test func twoInstancesRevokeEachTokenOnceThroughAppleFailing() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        let quickRetries: (inout Configuration) -> Void = {
            $0.revocationBackoff = .seconds(1)
            $0.revocationBackoffMax = .seconds(1)
        }
        try await withFixture(Self.instance(url: url, configure: quickRetries)) { a in
            try await withFixture(Self.instance(url: url, sharing: a.simulator, configure: quickRetries)) { b in
                let simulator = a.simulator
                var sessions: [String] = []
                for index in 0..<6 {
                    let sub = "000802.0000000000000000000000000000080\(index).0802"
                    sessions.append(try await Self.signIn(a, simulator: simulator, sub: sub, withCode: true).session)
                }
                let faults = 3
                simulator.injectFault(SimulatorFault(endpoint: .revoke, status: 503, count: faults))
                for (index, session) in sessions.enumerated() {
                    let instance = index.isMultiple(of: 2) ? a : b
                    let deleted = try await HTTPGet.raw(
                        port: instance.application.port,
                        "DELETE /api/account HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(session)\r\n\r\n")
                    #expect(deleted.hasPrefix("HTTP/1.1 202"), "\(deleted)")
                }
                func revokeCalls() -> Int { simulator.calls.filter { $0.endpoint == "revoke" }.count }
                _ = try await eventually(within: .seconds(60)) { try await a.application.store.revocations.depth().count == 0 }
                #expect(try await a.application.store.revocations.depth().count == 0, "the queue drained")
                // A duplicate could only come from a pass under way as the queue drained: once each
                // instance's worker has finished two more, any would have shown itself.
                let passes = (a.application.metrics.revocations.workerPasses, b.application.metrics.revocations.workerPasses)
                #expect(try await eventually {
                    a.application.metrics.revocations.workerPasses >= passes.0 + 2 && b.application.metrics.revocations.workerPasses >= passes.1 + 2
                })
                #expect(revokeCalls() == sessions.count + faults)
                let revoked = Set(simulator.calls.filter { $0.endpoint == "revoke" }.compactMap { $0.parameters["token"] })
                #expect(revoked.count == sessions.count, "every grant was revoked")
            }
        }
    }

    /// PostgreSQL restarted while requests keep coming: each is answered 200 or a clean 503
    /// (never a hang, a crash or another status), and afterwards everything works without
    /// restarting siwa-server.
    @Test func aRestartUnderLoadGivesOnly200sAnd503sAndThenRecovers() async throws {
        let cluster = try await PostgresCluster.start()
        let url = try await cluster.makeDatabase()
        do {
            try await withFixture(Self.instance(url: url)) { harness in
                let sub = "000803.00000000000000000000000000000803.0803"
                let session = try await Self.signIn(harness, simulator: harness.simulator, sub: sub)
                let port = harness.application.port
                // Requests before, during and after the restart, however fast each part goes: the
                // restart waits for answers, and every client goes on until it has had ten answers
                // sent after the restart was over (the minute is a bound on failure).
                final class Progress: Sendable {
                    let answered = Atomic<Int>(0)
                    let restarted = Atomic<Bool>(false)
                }
                let progress = Progress()
                let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                    for _ in 0..<4 {
                        group.addTask {
                            var seen: [Int] = []
                            var afterRestart = 0
                            let deadline = ContinuousClock.now + .seconds(60)
                            while afterRestart < 10, ContinuousClock.now < deadline {
                                let late = progress.restarted.load(ordering: .acquiring)
                                // A fresh request each time: /api/me reads through the cache only when warm.
                                seen.append(try await HTTPGet.run(port: port, path: "/api/sessions", headers: ["Authorization": "Bearer \(session)"]).status)
                                progress.answered.add(1, ordering: .relaxed)
                                if late { afterRestart += 1 }
                            }
                            return seen
                        }
                    }
                    group.addTask {
                        #expect(try await eventually { progress.answered.load(ordering: .relaxed) >= 20 })
                        try await cluster.restart()
                        progress.restarted.store(true, ordering: .releasing)
                        return []
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                #expect(!statuses.isEmpty)
                #expect(Set(statuses).isSubset(of: [200, 503]), "\(Set(statuses))")
                #expect(try await eventually { try await harness.get("/api/sessions", headers: ["Authorization": "Bearer \(session)"]).status == 200 })
                // Writes work again too.
                _ = try await Self.signIn(harness, simulator: harness.simulator, sub: sub)
            }
        } catch {
            try? await cluster.stop()
            throw error
        }
        try await cluster.stop()
    }
}
