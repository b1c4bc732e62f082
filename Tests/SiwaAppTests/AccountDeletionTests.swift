import AppleSimulator
import Foundation
import JSON
import Testing
@testable import SiwaApp

/// `DELETE /api/account` with the revocation queue, against the simulator (docs/reference/http-api.md), in process on
/// both engines.
@Suite struct AccountDeletionTests {
    static let app = NativeSignInTests.app

    static func signIn(_ fixture: NativeSignInTests.Fixture, sub: String, withCode: Bool) async throws -> (session: String, userID: String) {
        let issued = try fixture.simulator.issueCode(sub: sub, clientID: Self.app, nonce: "n")
        var body: [(String, JSONValue)] = [("identity_token", .string(issued.identityToken)), ("nonce", .string("n"))]
        if withCode { body.append(("authorization_code", .string(issued.code))) }
        let reply = try await fixture.signIn(body)
        return (try #require(reply.json?["session"]?.object?["token"]?.string), try #require(reply.json?["user"]?.object?["id"]?.string))
    }

    static func delete(_ fixture: NativeSignInTests.Fixture, session: String) async throws -> (status: Int, body: String) {
        let reply = try await fixture.harness.send(.delete, "/api/account", bearer: session)
        return (reply.status, reply.body)
    }

    @Test(arguments: DatabaseEngine.available)
    func deletionRevokesAtAppleEndsEverythingAndASignInStartsAfresh(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess)) { fixture in
            let sub = NativeSignInTests.sub(20)
            let (session, userID) = try await Self.signIn(fixture, sub: sub, withCode: true)
            let reply = try await Self.delete(fixture, session: session)
            #expect(reply.status == 202)
            #expect(reply.body == #"{"status":"deleted","apple_revocation":"done"}"#)
            let revoke = try #require(fixture.simulator.calls.first { $0.endpoint == "revoke" })
            #expect(revoke.parameters["token_type_hint"] == "refresh_token")
            #expect(revoke.parameters["client_id"] == Self.app)
            await #expect(try fixture.harness.get("/api/me", headers: ["Authorization": "Bearer \(session)"]).status == 401)
            #expect(try fixture.count("users") == 0)
            #expect(try fixture.count("sessions") == 0)
            #expect(try fixture.count("apple_tokens") == 0)
            #expect(try fixture.count("revocations") == 0)
            let (_, newID) = try await Self.signIn(fixture, sub: sub, withCode: false)
            #expect(newID != userID)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func withNothingToRevokeTheAnswerSaysNone(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess)) { fixture in
            let (session, _) = try await Self.signIn(fixture, sub: NativeSignInTests.sub(21), withCode: false)
            await #expect(try Self.delete(fixture, session: session).body == #"{"status":"deleted","apple_revocation":"none"}"#)
            #expect(fixture.simulator.calls.filter { $0.endpoint == "revoke" }.isEmpty)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func whileAppleFailsTheRevocationWaitsInTheQueueAndIsRetriedUntilItSucceeds(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess, configure: {
            $0.revocationBackoff = .seconds(1)
            $0.revocationBackoffMax = .seconds(2)
        })) { fixture in
            let (session, _) = try await Self.signIn(fixture, sub: NativeSignInTests.sub(22), withCode: true)
            fixture.simulator.injectFault(SimulatorFault(endpoint: .revoke, status: 503, count: 3))
            let reply = try await Self.delete(fixture, session: session)
            #expect(reply.body == #"{"status":"deleted","apple_revocation":"pending"}"#)
            // The account is gone at once, whatever Apple says.
            #expect(try fixture.count("users") == 0)
            #expect(try fixture.count("revocations") == 1)
            #expect(try await eventually(within: .seconds(60)) { try fixture.count("revocations") == 0 })
            #expect(fixture.simulator.calls.filter { $0.endpoint == "revoke" }.count >= 4)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func withoutASessionItIs401AndNothingIsDeleted(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess)) { fixture in
            _ = try await Self.signIn(fixture, sub: NativeSignInTests.sub(23), withCode: false)
            await #expect(try Self.delete(fixture, session: "nope").status == 401)
            #expect(try fixture.count("users") == 1)
        }
    }
}
