import Foundation
import HTTPServer
import JSON
import Testing
@testable import SiwaApp

/// CORS for web apps on the origins of `cors_origins` (docs/guides/connecting-your-app.md), in process on both engines
/// with a socket sample.
@Suite struct CrossOriginTests {
    typealias Fixture = AccountRoutesTests.Fixture

    static let app = "https://app.example.com"
    static let localApp = "http://localhost:3000"

    struct Reply {
        let status: Int
        /// Every header line, in order, names as sent.
        let fields: [(name: String, value: String)]
        let body: String

        func values(_ name: String) -> [String] {
            fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        }

        func value(_ name: String) -> String? { values(name).first }

        /// The `Access-Control-*` fields by lower-cased name.
        var accessControl: [String: String] {
            var found: [String: String] = [:]
            for field in fields where field.name.lowercased().hasPrefix("access-control-") {
                #expect(found[field.name.lowercased()] == nil, "\(field.name) appears once")
                found[field.name.lowercased()] = field.value
            }
            return found
        }
    }

    static func fixture(
        _ engine: DatabaseEngine, transport: Transport = .inProcess, _ origins: [String] = [app, localApp],
        configure: @escaping (inout Configuration) -> Void = { _ in }
    ) async throws -> Fixture {
        try await Fixture(engine: engine, transport: transport) {
            $0.corsOrigins = origins
            configure(&$0)
        }
    }

    static func send(
        _ fixture: Fixture, _ method: String, _ path: String, origin: String? = nil, token: String? = nil, cookie: String? = nil,
        headers: [(String, String)] = []
    ) async throws -> Reply {
        var fields: [(String, String)] = []
        if let origin { fields.append(("Origin", origin)) }
        if let cookie { fields.append(("Cookie", "siwa_session=\(cookie)")) }
        let reply = try await fixture.app.send(HTTPMethod(method), path, bearer: token, headers: fields + headers)
        return Reply(status: reply.status, fields: reply.fields, body: reply.body)
    }

    /// What every non-preflight response to a listed origin carries, exactly.
    static func expectActualHeaders(_ reply: Reply, origin: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            reply.accessControl == [
                "access-control-allow-origin": origin, "access-control-allow-credentials": "true",
                "access-control-expose-headers": "X-Request-Id, Retry-After",
            ], sourceLocation: sourceLocation)
        #expect(reply.values("Vary").contains("Origin"), sourceLocation: sourceLocation)
    }

    static func expectNoCORS(_ reply: Reply, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.accessControl.isEmpty, sourceLocation: sourceLocation)
        #expect(!reply.values("Vary").contains("Origin"), sourceLocation: sourceLocation)
    }

    /// The socket sample.
    @Test(arguments: DatabaseEngine.available, Transport.allCases)
    func aListedOriginReadsEveryAnswerOfTheAPIAndVerify(_ engine: DatabaseEngine, _ transport: Transport) async throws {
        try await withFixture(Self.fixture(engine, transport: transport)) { fixture in
            let (id, tokens) = try await fixture.user(sub: "002300.00000000000000000000000000002300.2300")
            let me = try await Self.send(fixture, "GET", "/api/me", origin: Self.app, token: tokens[0])
            #expect(me.status == 200)
            #expect((try? JSONParser.parse(me.body).object)?["id"]?.string == id)
            Self.expectActualHeaders(me, origin: Self.app)
            // The cookie too: the browser sends it with `credentials: "include"`.
            let viaCookie = try await Self.send(fixture, "GET", "/api/me", origin: Self.localApp, cookie: tokens[0])
            #expect(viaCookie.status == 200)
            Self.expectActualHeaders(viaCookie, origin: Self.localApp)
            // Refusals are readable too, or the page could not tell 401 from a network failure.
            let refused = try await Self.send(fixture, "GET", "/api/me", origin: Self.app)
            #expect(refused.status == 401)
            Self.expectActualHeaders(refused, origin: Self.app)
            let missing = try await Self.send(fixture, "GET", "/api/nothing-here", origin: Self.app)
            #expect(missing.status == 404)
            Self.expectActualHeaders(missing, origin: Self.app)
            let verify = try await Self.send(fixture, "GET", "/auth/verify", origin: Self.app, token: tokens[0])
            #expect(verify.status == 204)
            #expect(verify.value("X-Siwa-User-Id") == id)
            Self.expectActualHeaders(verify, origin: Self.app)
            // Pages and operations are not for other origins: untouched.
            for path in ["/healthz", "/account", "/openapi.json"] {
                Self.expectNoCORS(try await Self.send(fixture, "GET", path, origin: Self.app))
            }
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aTooManyRequestsAnswerShowsItsRetryAfterToTheListedOrigin(_ engine: DatabaseEngine) async throws {
        try await withFixture(Self.fixture(engine) { $0.rateLimit = RateLimit(requests: 1, perSeconds: 3600) }) { fixture in
            await #expect(try Self.send(fixture, "POST", "/api/auth/apple/nonce", origin: Self.app).status == 201)
            let limited = try await Self.send(fixture, "POST", "/api/auth/apple/nonce", origin: Self.app)
            #expect(limited.status == 429)
            #expect(limited.value("Retry-After") != nil)
            Self.expectActualHeaders(limited, origin: Self.app)
        }
    }

    @Test(arguments: DatabaseEngine.available, ["/api/me", "/api/sessions/ses_x", "/api/account", "/api/auth/apple", "/auth/verify"])
    func aPreflightFromAListedOriginIs204WithExactlyTheSpecsHeaders(_ engine: DatabaseEngine, path: String) async throws {
        // Over the socket: the connection adds the X-Request-Id it checks.
        try await withFixture(Self.fixture(engine, transport: .socket)) { fixture in
            let reply = try await Self.send(
                fixture, "OPTIONS", path, origin: Self.localApp,
                headers: [("Access-Control-Request-Method", "DELETE"), ("Access-Control-Request-Headers", "authorization,content-type")])
            #expect(reply.status == 204)
            #expect(reply.body.isEmpty)
            #expect(
                reply.accessControl == [
                    "access-control-allow-origin": Self.localApp, "access-control-allow-credentials": "true",
                    "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE",
                    "access-control-allow-headers": "Authorization, Content-Type, X-Request-Id", "access-control-max-age": "600",
                ])
            #expect(reply.values("Vary") == ["Origin"])
            #expect(reply.value("X-Request-Id") != nil)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aListedOriginsCookieWritePassesTheOriginCheck(_ engine: DatabaseEngine) async throws {
        try await withFixture(Self.fixture(engine)) { fixture in
            let (_, tokens) = try await fixture.user(sub: "002301.00000000000000000000000000002301.2301", sessions: 2)
            let logout = try await Self.send(fixture, "POST", "/api/logout", origin: Self.app, cookie: tokens[0])
            #expect(logout.status == 204)
            Self.expectActualHeaders(logout, origin: Self.app)
            await #expect(try Self.send(fixture, "GET", "/api/me", token: tokens[0]).status == 401)
            await #expect(try Self.send(fixture, "GET", "/api/me", token: tokens[1]).status == 200, "only that session ended")
        }
    }

    @Test(arguments: DatabaseEngine.available, ["https://evil.example", "http://app.example.com", "https://app.example.com:8443", "https://APP.example.com", "null"])
    func anUnlistedOriginGetsNoHeaderAndItsCookieWriteStaysRefused(_ engine: DatabaseEngine, origin: String) async throws {
        try await withFixture(Self.fixture(engine)) { fixture in
            let (_, tokens) = try await fixture.user(sub: "002302.00000000000000000000000000002302.2302")
            let read = try await Self.send(fixture, "GET", "/api/me", origin: origin, cookie: tokens[0])
            #expect(read.status == 200)
            Self.expectNoCORS(read)
            let write = try await Self.send(fixture, "POST", "/api/logout", origin: origin, cookie: tokens[0])
            #expect(write.status == 403)
            #expect((try? JSONParser.parse(write.body).object)?["error"]?.string == "forbidden")
            Self.expectNoCORS(write)
            // No preflight answer either: OPTIONS is routed as before (405 with Allow).
            let preflight = try await Self.send(fixture, "OPTIONS", "/api/me", origin: origin, headers: [("Access-Control-Request-Method", "GET")])
            #expect(preflight.status == 405)
            Self.expectNoCORS(preflight)
            await #expect(try Self.send(fixture, "GET", "/api/me", token: tokens[0]).status == 200, "the session is still live")
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func withoutCorsOriginsNoRequestGetsCORS(_ engine: DatabaseEngine) async throws {
        try await withFixture(Self.fixture(engine, [])) { fixture in
            #expect(fixture.harness.application.configuration.corsOrigins.isEmpty)
            let (_, tokens) = try await fixture.user(sub: "002303.00000000000000000000000000002303.2303")
            let read = try await Self.send(fixture, "GET", "/api/me", origin: Self.app, token: tokens[0])
            #expect(read.status == 200)
            Self.expectNoCORS(read)
            let preflight = try await Self.send(fixture, "OPTIONS", "/api/me", origin: Self.app, headers: [("Access-Control-Request-Method", "GET")])
            #expect(preflight.status == 405)
            #expect(preflight.value("Allow") == "GET, HEAD")
            Self.expectNoCORS(preflight)
            let write = try await Self.send(fixture, "POST", "/api/logout", origin: Self.app, cookie: tokens[0])
            #expect(write.status == 403)
            Self.expectNoCORS(write)
            // Our own origin is unaffected.
            let origin = fixture.harness.application.configuration.publicOrigin
            let own = try await Self.send(fixture, "POST", "/api/logout", origin: origin, cookie: tokens[0])
            #expect(own.status == 204)
            Self.expectNoCORS(own)
        }
    }
}
