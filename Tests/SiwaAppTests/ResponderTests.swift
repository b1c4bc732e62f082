import Foundation
import HTTPServer
import JSON
import Logging
import Store
import Testing
import TestSupport
@testable import SiwaApp

/// The application's responder: one test body in process and over a socket, time held by an
/// injected clock, and every failure answered by `ErrorResponses`.
@Suite struct ResponderTests {
    typealias Engine = DatabaseEngine
    /// TestSupport's held clock, under the name suites written before it still use.
    typealias HeldClock = TestSupport.HeldClock

    @Test(arguments: Engine.available, Transport.allCases)
    func theSameAnswersInProcessAndOverTheSocket(_ engine: Engine, _ transport: Transport) async throws {
        try await withApp(engine: engine, transport: transport) { app in
            let token = try await app.session(sub: "000001.responder.\(transport.rawValue)")

            let me = try await app.send(.get, "/api/me", bearer: token)
            #expect(me.status == 200)
            #expect(me.json?["apple_sub"]?.string == "000001.responder.\(transport.rawValue)")

            let nobody = try await app.send(.get, "/api/me")
            #expect(nobody.status == 401)
            #expect(nobody.json?["error"]?.string == "unauthenticated")

            let unknownSession = try await app.send(.delete, "/api/sessions/no-such-session", bearer: token)
            #expect(unknownSession.status == 404)
            #expect(unknownSession.json?["error"]?.string == "not_found")

            let missing = try await app.send(.get, "/no/such/path")
            #expect(missing.status == 404)
            #expect(missing.json?["error"]?.string == "not_found")

            let wrongMethod = try await app.send(.put, "/api/me")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.json?["error"]?.string == "method_not_allowed")
            #expect(wrongMethod.headers["allow"] == "GET, HEAD")
        }
    }

    @Test(arguments: Engine.available)
    func anIdleSessionEndsWhenTheHeldClockPassesTheIdleTTL(_ engine: Engine) async throws {
        let clock = HeldClock(1_900_000_000)
        try await withApp(engine: engine, clock: clock) { app in
            let token = try await app.session(sub: "000002.held.clock")
            #expect(try await app.send(.get, "/api/me", bearer: token).status == 200)
            let idleTTL = Int64(app.configuration.sessionIdleTTL.components.seconds)
            clock.advance(by: idleTTL - 1)
            #expect(try await app.send(.get, "/api/me", bearer: token).status == 200)
            // Used a second before the limit, so the idle time starts again from there.
            clock.advance(by: idleTTL + 1)
            let expired = try await app.send(.get, "/api/me", bearer: token)
            #expect(expired.status == 401)
            #expect(expired.json?["error"]?.string == "unauthenticated")
        }
    }

    /// The last-use batch is written when a request finds it due, so a use recorded just
    /// after a write may wait in memory until the stored time has run out (a quiet instance):
    /// the session is still live. Session A is used half an idle TTL in, a second after B's
    /// use wrote the batch; nothing comes until A's stored time is 10 s past the limit.
    @Test(arguments: Engine.available)
    func aUseNotYetWrittenKeepsTheSessionLive(_ engine: Engine) async throws {
        let clock = HeldClock(1_900_000_000)
        try await withApp(engine: engine, clock: clock) { app in
            let start = clock.now
            let a = try await app.session(sub: "000004.held.clock")
            let b = try await app.session(sub: "000005.held.clock")
            let idleTTL = Int64(app.configuration.sessionIdleTTL.components.seconds)

            clock.advance(by: idleTTL / 2)
            #expect(try await app.send(.get, "/api/me", bearer: b).status == 200)
            // The batch is written off the request path.
            #expect(try await eventually { try await Self.lastSeen(app.store, sub: "000005.held.clock") == clock.now })
            clock.advance(by: 1)
            #expect(try await app.send(.get, "/api/me", bearer: a).status == 200)
            #expect(try await Self.lastSeen(app.store, sub: "000004.held.clock") == start, "not due: the use waits in memory")

            clock.advance(by: idleTTL - idleTTL / 2 - 1 + 10)
            #expect(try await app.send(.get, "/api/me", bearer: a).status == 200)
        }
    }

    /// A graceful stop writes the uses still in memory.
    @Test(arguments: Engine.available)
    func stoppingWritesTheLastUsesStillInMemory(_ engine: Engine) async throws {
        let clock = HeldClock(1_900_000_000)
        try await withApp(engine: engine, clock: clock) { app in
            let token = try await app.session(sub: "000006.held.clock")
            clock.advance(by: 5)
            #expect(try await app.send(.get, "/api/me", bearer: token).status == 200)
            #expect(try await Self.lastSeen(app.store, sub: "000006.held.clock") == clock.now - 5)
            await app.stopApplication()
            // The application's store is closed with it: the same database, opened again.
            let (reopened, _) = try Store.open(app.configuration, connections: 1, logger: Logger(label: "test"))
            defer { reopened.close() }
            #expect(try await Self.lastSeen(reopened, sub: "000006.held.clock") == clock.now)
        }
    }

    /// The stored last use of the one session of the user `sub`.
    static func lastSeen(_ store: Store, sub: String) async throws -> Int64? {
        try await store.read {
            try $0.queryOne(
                "SELECT s.last_seen_at FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.apple_sub = ?", [.text(sub)]
            )?.int64(0)
        }
    }

    @Test(arguments: Engine.available)
    func aDatabaseFaultIsALogged500NotARefusal(_ engine: Engine) async throws {
        try await withApp(engine: engine) { app in
            let token = try await app.session(sub: "000003.fault")
            try await app.store.write { _ = try $0.run("ALTER TABLE sessions RENAME TO sessions_gone", []) }

            let reply = try await app.send(.get, "/api/me", bearer: token, via: .socket)
            #expect(reply.status == 500)
            #expect(reply.json?["error"]?.string == "internal_error")
            let requestID = try #require(reply.headers["x-request-id"])
            app.sink.flush()
            let logged = app.lines.all.first { $0.contains("request failed") }
            #expect(logged?.contains(requestID) == true)
            #expect(logged?.contains(token) == false)

            let list = try await app.send(.get, "/api/sessions", bearer: token)
            #expect(list.status == 500, "not an empty list")
        }
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

    /// docs/reference/http-api.md: a page route that cannot reach the database is a 503 page, the web callback's
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
        // docs/reference/http-api.md: 400 for state, binding and nonce; 401 Apple refused; 502 Apple unreachable.
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
