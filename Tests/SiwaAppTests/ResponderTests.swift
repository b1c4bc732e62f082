import Foundation
import HTTPServer
import JSON
import SQLite
import Store
import Synchronization
import Testing
@testable import SiwaApp

/// The application's responder: one test body in process and over a socket, time held by an
/// injected clock, and every failure answered by `ErrorResponses`.
@Suite struct ResponderTests {
    enum Transport: String, CaseIterable, Sendable {
        case inProcess, socket
    }

    struct Reply {
        let status: Int
        let headers: [String: String]
        let body: String
        var json: JSONObject? { try? JSONParser.parse(body).object }
    }

    /// A wall clock that moves only when told to.
    final class HeldClock: Sendable {
        private let seconds: Mutex<Int64>
        init(_ start: Int64) { seconds = Mutex(start) }
        var now: Int64 { seconds.withLock { $0 } }
        func advance(by delta: Int64) { seconds.withLock { $0 += delta } }
        var clocks: Clocks { Clocks(wall: { self.now }, monotonic: Clocks.system.monotonic) }
    }

    final class Fixture {
        let harness: ApplicationTests.Harness
        let database: Database

        init(clock: HeldClock? = nil) throws {
            harness = try ApplicationTests.Harness(clocks: clock?.clocks ?? .system)
            database = try Database(path: harness.application.configuration.database, readers: 1)
        }

        /// A user with one session, made as a sign-in would make it, at `now`.
        func session(sub: String, now: Int64 = Int64(Date().timeIntervalSince1970)) async throws -> String {
            try await database.write { connection in
                let (user, _) = try UserStore.upsertOnSignIn(
                    in: connection,
                    identity: VerifiedIdentity(appleSub: sub, email: nil, emailVerified: false, isPrivateEmail: false),
                    profile: nil, now: now)
                return try SessionStore.create(in: connection, userID: user.id, deviceName: nil, now: now, ttl: 30 * 86_400).token
            }
        }

        func send(_ transport: Transport, _ method: HTTPMethod, _ target: String, token: String? = nil) async throws -> Reply {
            switch transport {
            case .inProcess:
                var headers = HTTPHeaders()
                if let token { headers.add("Authorization", "Bearer \(token)") }
                let response = await harness.application.responder.respond(to: HTTPRequest(method, target, headers: headers))
                var names: [String: String] = [:]
                for (name, value) in response.headers { names[name.lowercased()] = value }
                return Reply(status: response.status, headers: names, body: String(decoding: response.body, as: UTF8.self))
            case .socket:
                var request = "\(method) \(target) HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 0\r\n"
                if let token { request += "Authorization: Bearer \(token)\r\n" }
                let text = try await HTTPGet.raw(port: harness.application.port, request + "\r\n")
                let parts = text.components(separatedBy: "\r\n\r\n")
                var names: [String: String] = [:]
                for line in (parts.first ?? "").split(separator: "\r\n").dropFirst() {
                    let pair = line.split(separator: ":", maxSplits: 1)
                    if pair.count == 2 { names[pair[0].lowercased()] = pair[1].trimmingCharacters(in: .whitespaces) }
                }
                let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
                return Reply(status: status, headers: names, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
            }
        }

        func stop() async {
            database.close()
            await harness.stop()
        }
    }

    @Test(arguments: Transport.allCases)
    func theSameAnswersInProcessAndOverTheSocket(_ transport: Transport) async throws {
        let fixture = try Fixture()
        let token = try await fixture.session(sub: "000001.responder.\(transport.rawValue)")

        let me = try await fixture.send(transport, .get, "/api/me", token: token)
        #expect(me.status == 200)
        #expect(me.json?["apple_sub"]?.string == "000001.responder.\(transport.rawValue)")

        let nobody = try await fixture.send(transport, .get, "/api/me")
        #expect(nobody.status == 401)
        #expect(nobody.json?["error"]?.string == "unauthenticated")

        let unknownSession = try await fixture.send(transport, .delete, "/api/sessions/no-such-session", token: token)
        #expect(unknownSession.status == 404)
        #expect(unknownSession.json?["error"]?.string == "not_found")

        let missing = try await fixture.send(transport, .get, "/no/such/path")
        #expect(missing.status == 404)
        #expect(missing.json?["error"]?.string == "not_found")

        let wrongMethod = try await fixture.send(transport, .put, "/api/me")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.json?["error"]?.string == "method_not_allowed")
        #expect(wrongMethod.headers["allow"] == "GET, HEAD")
        await fixture.stop()
    }

    @Test func anIdleSessionEndsWhenTheHeldClockPassesTheIdleTTL() async throws {
        let clock = HeldClock(1_900_000_000)
        let fixture = try Fixture(clock: clock)
        let token = try await fixture.session(sub: "000002.held.clock", now: clock.now)
        #expect(try await fixture.send(.inProcess, .get, "/api/me", token: token).status == 200)
        let idleTTL = Int64(fixture.harness.application.configuration.sessionIdleTTL.components.seconds)
        clock.advance(by: idleTTL - 1)
        #expect(try await fixture.send(.inProcess, .get, "/api/me", token: token).status == 200)
        // Used a second before the limit, so the idle time starts again from there.
        clock.advance(by: idleTTL + 1)
        let expired = try await fixture.send(.inProcess, .get, "/api/me", token: token)
        #expect(expired.status == 401)
        #expect(expired.json?["error"]?.string == "unauthenticated")
        await fixture.stop()
    }

    /// The last-use batch is written when a request finds it due, so a use recorded just
    /// after a write may wait in memory until the stored time has run out (a quiet instance):
    /// the session is still live. Session A is used half an idle TTL in, a second after B's
    /// use wrote the batch; nothing comes until A's stored time is 10 s past the limit.
    @Test func aUseNotYetWrittenKeepsTheSessionLive() async throws {
        let clock = HeldClock(1_900_000_000)
        let fixture = try Fixture(clock: clock)
        let start = clock.now
        let a = try await fixture.session(sub: "000004.held.clock", now: start)
        let b = try await fixture.session(sub: "000005.held.clock", now: start)
        let idleTTL = Int64(fixture.harness.application.configuration.sessionIdleTTL.components.seconds)
        func lastSeen(_ token: String) async throws -> Int64? {
            try Self.lastSeen(fixture.database, sub: token == a ? "000004.held.clock" : "000005.held.clock")
        }

        clock.advance(by: idleTTL / 2)
        #expect(try await fixture.send(.inProcess, .get, "/api/me", token: b).status == 200)
        // The batch is written off the request path.
        let deadline = ContinuousClock.now + .seconds(30)
        while try await lastSeen(b) != clock.now, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try await lastSeen(b) == clock.now)
        clock.advance(by: 1)
        #expect(try await fixture.send(.inProcess, .get, "/api/me", token: a).status == 200)
        #expect(try await lastSeen(a) == start, "not due: the use waits in memory")

        clock.advance(by: idleTTL - idleTTL / 2 - 1 + 10)
        #expect(try await fixture.send(.inProcess, .get, "/api/me", token: a).status == 200)
        await fixture.stop()
    }

    /// A graceful stop writes the uses still in memory.
    @Test func stoppingWritesTheLastUsesStillInMemory() async throws {
        let clock = HeldClock(1_900_000_000)
        let fixture = try Fixture(clock: clock)
        let token = try await fixture.session(sub: "000006.held.clock", now: clock.now)
        clock.advance(by: 5)
        #expect(try await fixture.send(.inProcess, .get, "/api/me", token: token).status == 200)
        #expect(try Self.lastSeen(fixture.database, sub: "000006.held.clock") == clock.now - 5)
        await fixture.harness.application.stop()
        #expect(try Self.lastSeen(fixture.database, sub: "000006.held.clock") == clock.now)
        fixture.database.close()
        await fixture.harness.simulator.stop()
        try? FileManager.default.removeItem(atPath: fixture.harness.folder)
    }

    /// The stored last use of the one session of the user `sub`.
    static func lastSeen(_ database: Database, sub: String) throws -> Int64? {
        try database.read {
            try $0.queryOne(
                "SELECT s.last_seen_at FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.apple_sub = ?", [.text(sub)]
            )?.int64(0)
        }
    }

    @Test func aDatabaseFaultIsALogged500NotARefusal() async throws {
        let fixture = try Fixture()
        let token = try await fixture.session(sub: "000003.fault")
        try await fixture.database.write { try $0.execute("ALTER TABLE sessions RENAME TO sessions_gone") }

        let reply = try await fixture.send(.socket, .get, "/api/me", token: token)
        #expect(reply.status == 500)
        #expect(reply.json?["error"]?.string == "internal_error")
        let requestID = try #require(reply.headers["x-request-id"])
        fixture.harness.sink.flush()
        let logged = fixture.harness.lines.all.first { $0.contains("request failed") }
        #expect(logged?.contains(requestID) == true)
        #expect(logged?.contains(token) == false)

        let list = try await fixture.send(.inProcess, .get, "/api/sessions", token: token)
        #expect(list.status == 500, "not an empty list")
        await fixture.stop()
    }
}

/// Every failure type, and what it becomes.
@Suite struct ErrorResponsesTests {
    let errors = ErrorResponses(logger: .init(label: "test"))

    func render(_ error: any Error) -> (status: Int, code: String?, body: String) {
        let response = errors.response(for: error, request: HTTPRequest(.get, "/x"))
        let body = String(decoding: response.body, as: UTF8.self)
        return (response.status, (try? JSONParser.parse(body).object)?["error"]?.string, body)
    }

    @Test func theAPIShapeEscapesWhatItCarries() {
        let response = errors.json(400, code: "bad_request", description: "a \"quoted\"\nline")
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"bad_request","error_description":"a \"quoted\"\nline"}"#)
        #expect(response.headers["content-type"] == "application/json")
    }

    @Test func signInFailuresOnTheAPI() {
        #expect(render(SignIn.Failure.invalidRequest("x")).status == 400)
        #expect(render(SignIn.Failure.invalidToken(.expired)) .status == 401)
        #expect(render(SignIn.Failure.invalidToken(.expired)).code == "invalid_token")
        #expect(render(SignIn.Failure.invalidGrant).code == "invalid_grant")
        #expect(render(SignIn.Failure.appleUnavailable("down")).status == 502)
        #expect(render(SignIn.Failure.keysUnavailable).status == 503)
        // A storage failure is answered by its cause: an outage is 503, anything else a 500.
        struct Surprise: Error {}
        #expect(render(SignIn.Failure.storage(Surprise())).status == 500)
        #expect(render(SignIn.Failure.storage(Surprise())).code == "internal_error")
        #expect(render(SignIn.Failure.storage(StoreError.unavailable(reason: "down"))).status == 503)
        #expect(render(SignIn.Failure.storage(StoreError.unavailable(reason: "down"))).code == "database_unavailable")
        #expect(render(StoreError.unavailable(reason: "down")).code == "database_unavailable")
    }

    /// SPEC §16: a page route that cannot reach the database is a 503 page, the web callback's
    /// sign-in included; other storage failures stay 500.
    @Test func anUnavailableDatabaseIsA503PageToo() {
        struct Surprise: Error {}
        let cases: [(any Error, Int)] = [
            (StoreError.unavailable(reason: "down"), 503), (WebSignIn.Failure.signIn(.storage(StoreError.unavailable(reason: "down"))), 503),
            (WebSignIn.Failure.signIn(.storage(Surprise())), 500),
        ]
        for (error, status) in cases {
            let response = errors.response(for: ShownAsPage(error: error, headers: [("Set-Cookie", "b=; Max-Age=0")]), request: nil)
            #expect(response.status == status, "\(error)")
            #expect(response.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(response.headers["set-cookie"] == "b=; Max-Age=0")
        }
    }

    @Test func webSignInFailuresArePagesWithTheSpecStatuses() {
        // SPEC §7: 400 for state, binding and nonce; 401 Apple refused; 502 Apple unreachable.
        let cases: [(WebSignIn.Failure, Int)] = [
            (.malformed, 400), (.unknownState, 400), (.expiredState, 400), (.bindingMissing, 400), (.bindingMismatch, 400),
            (.signIn(.invalidToken(.nonceMismatch)), 400), (.signIn(.invalidGrant), 401), (.signIn(.keysUnavailable), 502),
            (.signIn(.appleUnavailable("x")), 502),
        ]
        for (failure, status) in cases {
            let response = errors.response(for: ShownAsPage(error: failure, headers: [("Set-Cookie", "b=; Max-Age=0")]), request: nil)
            #expect(response.status == status, "\(failure)")
            #expect(response.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(response.headers["set-cookie"] == "b=; Max-Age=0")
        }
    }

    @Test func refusalsKeepTheirHeaders() {
        let limited = errors.response(for: APIError.tooManyRequests(retryAfter: 7), request: nil)
        #expect(limited.status == 429)
        #expect(limited.headers["retry-after"] == "7")
        let wrongMethod = errors.response(for: HTTPRefusal.methodNotAllowed(.post, allow: "GET, HEAD"), request: nil)
        #expect(wrongMethod.headers["allow"] == "GET, HEAD")
        #expect(render(HTTPRefusal.busy).code == "busy")
    }

    @Test func sessionRefusalsAndNotifications() {
        #expect(render(SessionAuthenticator.Refusal.unauthenticated).status == 401)
        #expect(render(SessionAuthenticator.Refusal.forbidden).status == 403)
        #expect(render(NotificationProcessor.Refusal.malformed).code == "invalid_request")
        #expect(render(NotificationProcessor.Refusal.invalidToken(.badSignature)).status == 400)
    }

    @Test func anUnknownErrorIsA500AndOnAPageRouteAPage() {
        struct Surprise: Error {}
        #expect(render(Surprise()).status == 500)
        #expect(render(Surprise()).code == "internal_error")
        let page = errors.response(for: ShownAsPage(error: Surprise()), request: nil)
        #expect(page.status == 500)
        #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
        // A JSON refusal a page route throws on purpose stays JSON.
        #expect(errors.response(for: ShownAsPage(error: APIError.invalidRequest("x")), request: nil).status == 400)
    }
}

@Suite struct BearerCredentialsTests {
    @Test func theSchemeIsCaseInsensitiveAndWhitespaceAroundTheTokenGoes() {
        #expect(SessionAuthenticator.bearerCredentials("Bearer abc") == "abc")
        #expect(SessionAuthenticator.bearerCredentials("bearer abc") == "abc")
        #expect(SessionAuthenticator.bearerCredentials("BEARER abc") == "abc")
        #expect(SessionAuthenticator.bearerCredentials("Bearer \t abc \t") == "abc")
        #expect(SessionAuthenticator.bearerCredentials("Bearer ") == "")
    }

    @Test func otherSchemesAndLookalikesAreNotBearer() {
        for value in ["Basic abc", "Bearer", "Bearerabc", "Bearer\tabc", "Bearex abc", "Bea", "", "B\u{0}arer abc", "Bearer\u{2000}abc"] {
            #expect(SessionAuthenticator.bearerCredentials(value) == nil, "\(value)")
        }
    }
}
