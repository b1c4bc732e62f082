import Foundation
import HTTPServer
import JSON
import Store
import Testing
import TestSupport
@testable import SiwaApp

/// Sessions and account routes (docs/reference/http-api.md), in process on both engines with a socket sample,
/// with sessions made in the database as a sign-in would make them.
@Suite struct AccountRoutesTests {
    struct Reply {
        let status: Int
        let headers: String
        let body: String
        var json: JSONObject? { try? JSONParser.parse(body).object }
    }

    /// The application on the test harness (`TestApp`), its requests over the socket unless
    /// told otherwise.
    final class Fixture: Stoppable {
        let app: TestApp
        /// The name the suites used before `TestApp`: its application, simulator and lines.
        var harness: TestApp { app }
        var store: Store { app.store }

        init(
            engine: DatabaseEngine = .sqlite, transport: Transport = .socket, configure: (inout Configuration) -> Void = { _ in }
        ) async throws {
            app = try await TestApp(engine: engine, transport: transport, configure: configure)
        }

        /// Runs `body` with a fresh fixture and stops it at scope exit, whatever happened.
        static func with<T>(
            engine: DatabaseEngine = .sqlite, transport: Transport = .socket, configure: (inout Configuration) -> Void = { _ in },
            _ body: (Fixture) async throws -> T
        ) async throws -> T {
            try await withFixture(Fixture(engine: engine, transport: transport, configure: configure), body)
        }

        /// A user with `count` live sessions; returns the user id and the session tokens.
        func user(sub: String, sessions count: Int = 1, givenName: String? = "Ada") async throws -> (id: String, tokens: [String]) {
            let now = Int64(Date().timeIntervalSince1970)
            return try await store.write { connection in
                let (user, _) = try UserStore.upsertOnSignIn(
                    in: connection,
                    identity: VerifiedIdentity(appleSub: sub, email: "x@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true),
                    profile: ClientProfile(givenName: givenName, familyName: nil), now: now)
                var tokens: [String] = []
                for index in 0..<count {
                    tokens.append(try SessionStore.create(in: connection, userID: user.id, deviceName: "device \(index)", now: now, ttl: 3600).token)
                }
                return (user.id, tokens)
            }
        }

        /// One request; `headers` is the answer's header block as the wire would carry it
        /// (names lower-cased), whichever way it went.
        func send(_ method: String, _ path: String, token: String? = nil, cookie: String? = nil, origin: String? = nil) async throws -> Reply {
            var headers: [(String, String)] = []
            if let cookie { headers.append(("Cookie", "theme=dark; siwa_session=\(cookie)")) }
            if let origin { headers.append(("Origin", origin)) }
            let reply = try await app.send(HTTPMethod(method), path, bearer: token, headers: headers)
            let fields = reply.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
            return Reply(status: reply.status, headers: (["HTTP/1.1 \(reply.status)"] + fields).joined(separator: "\r\n"), body: reply.body)
        }

        func stop() async { await app.stop() }
    }

    /// The socket sample: the same answer in process and over the wire.
    @Test(arguments: DatabaseEngine.available, Transport.allCases)
    func meReturnsTheUserObject(_ engine: DatabaseEngine, _ transport: Transport) async throws {
        try await Fixture.with(engine: engine, transport: transport) { fixture in
            let (id, tokens) = try await fixture.user(sub: "000200.00000000000000000000000000000200.0200")
            let reply = try await fixture.send("GET", "/api/me", token: tokens[0])
            #expect(reply.status == 200)
            let user = try #require(reply.json)
            #expect(user.keys == ["id", "apple_sub", "email", "email_verified", "is_private_email", "email_forwarding",
                                  "real_user_status", "name", "apple_credential", "external_id", "sign_in_methods", "locale", "created_at", "updated_at"])
            #expect(user["external_id"] == .null)
            #expect(user["locale"] == .string("en"))
            #expect(user["sign_in_methods"] == .array([.string("apple")]))
            #expect(user["id"]?.string == id)
            #expect(user["email_verified"] == .bool(true) && user["is_private_email"] == .bool(true))
            #expect(user["email_forwarding"]?.string == "enabled")  // a private relay address forwards
            #expect(user["real_user_status"]?.string == "unsupported")
            #expect(user["name"]?.object?["given"]?.string == "Ada")
            #expect(user["name"]?.object?["family"] == .null)
            #expect(user["apple_credential"]?.string == "authorized")
            #expect(user["created_at"]?.string?.hasSuffix("Z") == true)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func withoutALiveSessionEverythingIs401(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine, transport: .inProcess) { fixture in
            for (method, path) in [("GET", "/api/me"), ("POST", "/api/logout"), ("GET", "/api/sessions"), ("DELETE", "/api/sessions/ses_x")] {
                await #expect(try fixture.send(method, path).status == 401)
                let reply = try await fixture.send(method, path, token: "not-a-session")
                #expect(reply.status == 401)
                #expect(reply.body.hasPrefix(#"{"error":"unauthenticated""#))
            }
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func logoutEndsOnlyThatSession(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine, transport: .inProcess) { fixture in
            let (_, tokens) = try await fixture.user(sub: "000201.00000000000000000000000000000201.0201", sessions: 2)
            await #expect(try fixture.send("POST", "/api/logout", token: tokens[0]).status == 204)
            await #expect(try fixture.send("GET", "/api/me", token: tokens[0]).status == 401)
            await #expect(try fixture.send("GET", "/api/me", token: tokens[1]).status == 200)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func sessionsAreListedAndEndedButNeverAnotherUsers(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine, transport: .inProcess) { fixture in
            let (_, ada) = try await fixture.user(sub: "000202.00000000000000000000000000000202.0202", sessions: 2)
            let (_, bob) = try await fixture.user(sub: "000203.00000000000000000000000000000203.0203", sessions: 1, givenName: "Bob")
            let listed = try await #require(try fixture.send("GET", "/api/sessions", token: ada[0]).json?["sessions"]?.array)
            #expect(listed.count == 2)
            #expect(listed.filter { $0.object?["current"] == .bool(true) }.count == 1)
            let other = try #require(listed.first { $0.object?["current"] == .bool(false) }?.object?["id"]?.string)
            let bobsID = try await #require(try fixture.send("GET", "/api/sessions", token: bob[0]).json?["sessions"]?.array?.first?.object?["id"]?.string)

            // Ada cannot end Bob's session: 404, and Bob stays signed in.
            await #expect(try fixture.send("DELETE", "/api/sessions/\(bobsID)", token: ada[0]).status == 404)
            await #expect(try fixture.send("GET", "/api/me", token: bob[0]).status == 200)
            // Her own other session ends, once.
            await #expect(try fixture.send("DELETE", "/api/sessions/\(other)", token: ada[0]).status == 204)
            await #expect(try fixture.send("DELETE", "/api/sessions/\(other)", token: ada[0]).status == 404)
            await #expect(try fixture.send("GET", "/api/me", token: ada[1]).status == 401)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func cookieSessionsNeedOurOriginToChangeState(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine, transport: .inProcess) { fixture in
            let (_, tokens) = try await fixture.user(sub: "000204.00000000000000000000000000000204.0204")
            await #expect(try fixture.send("GET", "/api/me", cookie: tokens[0]).status == 200)
            let foreign = try await fixture.send("POST", "/api/logout", cookie: tokens[0], origin: "https://evil.example")
            #expect(foreign.status == 403)
            #expect(foreign.body.hasPrefix(#"{"error":"forbidden""#))
            await #expect(try fixture.send("POST", "/api/logout", cookie: tokens[0]).status == 403)
            await #expect(try fixture.send("GET", "/api/me", cookie: tokens[0]).status == 200)
            let origin = fixture.harness.application.configuration.publicOrigin
            await #expect(try fixture.send("POST", "/api/logout", cookie: tokens[0], origin: origin).status == 204)
            await #expect(try fixture.send("GET", "/api/me", cookie: tokens[0]).status == 401)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func noncesAreIssuedForTenMinutes(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine, transport: .inProcess) { fixture in
            let reply = try await fixture.send("POST", "/api/auth/apple/nonce")
            #expect(reply.status == 201)
            let nonce = try #require(reply.json?["nonce"]?.string)
            #expect(nonce.utf8.count >= 22)
            #expect(reply.json?["expires_at"]?.string?.hasSuffix("Z") == true)
            await #expect(try fixture.send("POST", "/api/auth/apple/nonce").json?["nonce"]?.string != nonce)
        }
    }
}
