import HTTPServer
import Store
import Testing
import TestSupport
@testable import SiwaApp

/// `/healthz` and the session reads (`/api/me`, `/auth/verify`) are answered on the I/O loop's
/// thread when nothing needs waiting for (`respondImmediately`); a session only the database
/// can vouch for goes to the task, which reads it. Either way the answer is the same.
@Suite struct ImmediateAnswersTests {
    static let sub = "000950.00000000000000000000000000000950.0950"

    static func request(_ path: String, bearer: String?) -> HTTPRequest {
        var headers = HTTPHeaders()
        if let bearer { headers.add("Authorization", "Bearer \(bearer)") }
        return HTTPRequest(.get, path, headers: headers)
    }

    /// A user and a session made in the database, as a sign-in makes them, at the held time.
    static func session(_ app: TestApp, now: Int64) async throws -> (userID: String, token: String) {
        try await app.store.write { connection in
            let (user, _) = try UserStore.upsertOnSignIn(in: connection, identity: VerifiedIdentity(appleSub: sub), profile: nil, now: now)
            return (user.id, try SessionStore.create(in: connection, userID: user.id, deviceName: nil, now: now, ttl: 30 * 86_400).token)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aSessionInMemoryIsAnsweredAtOnceAndOneOnlyTheDatabaseKnowsWaitsForTheTask(_ engine: DatabaseEngine) async throws {
        let clock = HeldClock()
        try await withApp(engine: engine, clock: clock, configure: { $0.sessionIdleTTL = .seconds(3_600) }) { app in
            let responder = app.application.responder
            let (userID, token) = try await Self.session(app, now: clock.now)

            #expect(responder.respondImmediately(to: Self.request("/healthz", bearer: nil))?.status == 200)
            // A route without an immediate handler always goes to its task.
            #expect(responder.respondImmediately(to: Self.request("/openapi.json", bearer: nil)) == nil)

            // The task reads the session from the database into memory (on PostgreSQL, once the
            // cache listens); from then on the same request is answered at once, alike.
            let read = await responder.respond(to: Self.request("/api/me", bearer: token))
            #expect(read.status == 200)
            // On PostgreSQL memory serves only while its listener has confirmed within a second:
            // a stalled machine may send a lookup to the database again, so each is polled.
            func immediately(_ path: String) async throws -> HTTPResponse? {
                var answer: HTTPResponse?
                _ = try await eventually {
                    _ = await responder.respond(to: Self.request(path, bearer: token))
                    answer = responder.respondImmediately(to: Self.request(path, bearer: token))
                    return answer != nil
                }
                return answer
            }
            let me = try #require(try await immediately("/api/me"))
            #expect(me.status == 200 && me.body == read.body)
            let verify = try #require(try await immediately("/auth/verify"))
            #expect(verify.status == 204 && verify.headers["X-Siwa-User-Id"] == userID)

            // Refusals memory can decide are made at once, as the task makes them.
            for bearer in [nil, "not-a-session"] {
                let refused = try #require(responder.respondImmediately(to: Self.request("/api/me", bearer: bearer)))
                let byTask = await responder.respond(to: Self.request("/api/me", bearer: bearer))
                #expect(refused.status == 401 && refused.body == byTask.body)
            }
            // A token of the right shape that memory does not know is the database's to refuse.
            let unknown = String(repeating: "A", count: 43)
            #expect(responder.respondImmediately(to: Self.request("/api/me", bearer: unknown)) == nil)
            #expect(await responder.respond(to: Self.request("/api/me", bearer: unknown)).status == 401)

            // Idle past session_idle_ttl in memory (an hour here; the session lives 30 days): only
            // the database knows whether it was used since, so the task asks it, and refuses.
            clock.advance(by: 3_600 + 1)
            #expect(responder.respondImmediately(to: Self.request("/api/me", bearer: token)) == nil)
            #expect(await responder.respond(to: Self.request("/api/me", bearer: token)).status == 401)
        }
    }

    /// Over a socket: pipelined requests answered at once and by tasks come back in order.
    @Test func pipelinedImmediateAndTaskAnswersKeepTheirOrder() async throws {
        let clock = HeldClock()
        try await withApp(engine: .sqlite, transport: .socket, clock: clock) { app in
            let (_, token) = try await Self.session(app, now: clock.now)
            let auth = "Authorization: Bearer \(token)\r\n"
            var pipelined = ""
            for path in ["/api/me", "/healthz", "/openapi.json", "/auth/verify", "/api/me", "/healthz"] {
                pipelined += "GET \(path) HTTP/1.1\r\nHost: t\r\n\(auth)\r\n"
            }
            pipelined += "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
            let text = try await HTTPGet.raw(port: app.port, pipelined)
            // Bodies do not end in a line break: each answer starts where the last one's body ends.
            let answers = text.components(separatedBy: "HTTP/1.1 ").dropFirst()
            #expect(answers.map { $0.prefix(3) } == ["200", "200", "200", "204", "200", "200", "200"])
            // The third is the OpenAPI document, made by a task between immediate ones.
            #expect(answers.dropFirst(2).first?.contains("\"openapi\": \"3.1.0\"") == true)
        }
    }
}
