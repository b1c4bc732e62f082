import Foundation
import JSON
import Store
import Testing
import TestSupport
@testable import SiwaApp

/// `GET /auth/verify`, forward authentication (docs/guides/connecting-your-backend.md), over real sockets.
@Suite struct ForwardAuthTests {
    typealias Fixture = AccountRoutesTests.Fixture

    static func header(_ name: String, in reply: AccountRoutesTests.Reply) -> String? {
        for line in reply.headers.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    @Test func aBearerSessionIs204WithTheUserInHeaders() async throws {
        let fixture = try await Fixture()
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
        await fixture.stop()
    }

    @Test func theCookieWorksFromAnyOriginAndHEADAnswersTheSame() async throws {
        let fixture = try await Fixture()
        let (id, tokens) = try await fixture.user(sub: "000901.00000000000000000000000000000901.0901")
        // A proxy forwards the original request's headers, Origin of the team's site included.
        let viaCookie = try await fixture.send("GET", "/auth/verify", cookie: tokens[0], origin: "https://app.example.com")
        #expect(viaCookie.status == 204)
        #expect(Self.header("X-Siwa-User-Id", in: viaCookie) == id)
        let head = try await fixture.send("HEAD", "/auth/verify", token: tokens[0])
        #expect(head.status == 204 && head.body.isEmpty)
        #expect(Self.header("X-Siwa-User-Id", in: head) == id)
        await fixture.stop()
    }

    @Test(arguments: [nil, "not-a-session", ""])
    func noLiveSessionIs401WithWWWAuthenticate(token: String?) async throws {
        let fixture = try await Fixture()
        let reply = try await fixture.send("GET", "/auth/verify", token: token)
        #expect(reply.status == 401)
        #expect(Self.header("WWW-Authenticate", in: reply) == "Bearer")
        #expect(reply.json?["error"]?.string == "unauthenticated")
        #expect(Self.header("X-Siwa-User-Id", in: reply) == nil)
        await fixture.stop()
    }

    @Test func anEndedSessionIsRefusedAtOnce() async throws {
        let fixture = try await Fixture()
        let (_, tokens) = try await fixture.user(sub: "000902.00000000000000000000000000000902.0902")
        #expect(try await fixture.send("GET", "/auth/verify", token: tokens[0]).status == 204)
        #expect(try await fixture.send("POST", "/api/logout", token: tokens[0]).status == 204)
        #expect(try await fixture.send("GET", "/auth/verify", token: tokens[0]).status == 401)
        await fixture.stop()
    }

    @Test func itCountsAsUseOfTheSession() async throws {
        let clock = ResponderTests.HeldClock(1_900_000_000)
        let fixture = try ResponderTests.Fixture(clock: clock)
        let token = try await fixture.session(sub: "000903.held.clock", now: clock.now)
        let idleTTL = Int64(fixture.harness.application.configuration.sessionIdleTTL.components.seconds)
        clock.advance(by: idleTTL - 1)
        #expect(try await fixture.send(.inProcess, .get, "/auth/verify", token: token).status == 204)
        // Past the idle TTL since sign-in, but not since the verification: still live.
        clock.advance(by: 2)
        #expect(try await fixture.send(.inProcess, .get, "/api/me", token: token).status == 200)
        await fixture.stop()
    }
}
