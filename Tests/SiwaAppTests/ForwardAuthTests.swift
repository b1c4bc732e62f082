import Foundation
import JSON
import Store
import Testing
import TestSupport
@testable import SiwaApp

/// `GET /auth/verify`, forward authentication (docs/guides/connecting-your-backend.md), in process on both engines with a
/// socket sample.
@Suite struct ForwardAuthTests {
    typealias Fixture = AccountRoutesTests.Fixture

    static func header(_ name: String, in reply: AccountRoutesTests.Reply) -> String? {
        for line in reply.headers.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// The socket sample: the same headers in process and over the wire.
    @Test(arguments: DatabaseEngine.available, Transport.allCases)
    func aBearerSessionIs204WithTheUserInHeaders(_ engine: DatabaseEngine, _ transport: Transport) async throws {
        try await Fixture.with(engine: engine, transport: transport) { fixture in
            let (id, tokens) = try await fixture.user(sub: "000900.00000000000000000000000000000900.0900")
            let reply = try await fixture.send("GET", "/auth/verify", token: tokens[0])
            #expect(reply.status == 204)
            #expect(reply.body.isEmpty)
            #expect(Self.header("X-Siwa-User-Id", in: reply) == id)
            #expect(Self.header("X-Siwa-Session-Id", in: reply)?.hasPrefix("ses_") == true)
            #expect(Self.header("X-Siwa-Apple-Sub", in: reply) == "000900.00000000000000000000000000000900.0900")
            #expect(Self.header("X-Siwa-External-Id", in: reply) == nil, "omitted while not set")
            #expect(Self.header("Cache-Control", in: reply) == "no-store")

            // The team's own id rides along once it is set.
            _ = try await fixture.harness.application.store.setExternalID(userID: id, externalID: "crm-42", now: 1)
            let again = try await fixture.send("GET", "/auth/verify", token: tokens[0])
            #expect(Self.header("X-Siwa-External-Id", in: again) == "crm-42")
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func theCookieWorksFromAnyOriginAndHEADAnswersTheSame(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine, transport: .inProcess) { fixture in
            let (id, tokens) = try await fixture.user(sub: "000901.00000000000000000000000000000901.0901")
            // A proxy forwards the original request's headers, Origin of the team's site included.
            let viaCookie = try await fixture.send("GET", "/auth/verify", cookie: tokens[0], origin: "https://app.example.com")
            #expect(viaCookie.status == 204)
            #expect(Self.header("X-Siwa-User-Id", in: viaCookie) == id)
            let head = try await fixture.send("HEAD", "/auth/verify", token: tokens[0])
            #expect(head.status == 204 && head.body.isEmpty)
            #expect(Self.header("X-Siwa-User-Id", in: head) == id)
        }
    }

    @Test(arguments: DatabaseEngine.available, [nil, "not-a-session", ""])
    func noLiveSessionIs401WithWWWAuthenticate(_ engine: DatabaseEngine, token: String?) async throws {
        try await Fixture.with(engine: engine, transport: .inProcess) { fixture in
            let reply = try await fixture.send("GET", "/auth/verify", token: token)
            #expect(reply.status == 401)
            #expect(Self.header("WWW-Authenticate", in: reply) == "Bearer")
            #expect(reply.json?["error"]?.string == "unauthenticated")
            #expect(Self.header("X-Siwa-User-Id", in: reply) == nil)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func anEndedSessionIsRefusedAtOnce(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine, transport: .inProcess) { fixture in
            let (_, tokens) = try await fixture.user(sub: "000902.00000000000000000000000000000902.0902")
            #expect(try await fixture.send("GET", "/auth/verify", token: tokens[0]).status == 204)
            #expect(try await fixture.send("POST", "/api/logout", token: tokens[0]).status == 204)
            #expect(try await fixture.send("GET", "/auth/verify", token: tokens[0]).status == 401)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func itCountsAsUseOfTheSession(_ engine: DatabaseEngine) async throws {
        let clock = HeldClock(1_900_000_000)
        try await withApp(engine: engine, clock: clock) { app in
            let token = try await app.session(sub: "000903.held.clock")
            let idleTTL = Int64(app.configuration.sessionIdleTTL.components.seconds)
            clock.advance(by: idleTTL - 1)
            #expect(try await app.send(.get, "/auth/verify", bearer: token).status == 204)
            // Past the idle TTL since sign-in, but not since the verification: still live.
            clock.advance(by: 2)
            #expect(try await app.send(.get, "/api/me", bearer: token).status == 200)
        }
    }
}
