import AppleSimulator
import Foundation
import JSON
import Store
import Testing
import TestSupport
@testable import SiwaApp

/// docs/reference/http-api.md "Refresh-token re-validation", end to end against the simulator, in process on both
/// engines: the validator runs inside the application with a one-second interval.
@Suite struct RefreshValidationTests {
    static let app = NativeSignInTests.app

    static func sub(_ n: Int) -> String { "000500.\(String(repeating: "0", count: 29))\(100 + n).0500" }

    /// Signs `sub` in with a code (so a refresh token is stored); returns the session token.
    static func signInWithCode(_ fixture: NativeSignInTests.Fixture, sub: String) async throws -> String {
        let issued = try fixture.simulator.issueCode(sub: sub, clientID: app, nonce: "n")
        let reply = try await fixture.signIn([
            ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string("n")),
        ])
        return try #require(reply.json?["session"]?.object?["token"]?.string, "\(reply.body)")
    }

    static func refreshCalls(_ simulator: AppleIDSimulator) -> [SimulatorCall] {
        simulator.calls.filter { $0.endpoint == "token" && $0.parameters["grant_type"] == "refresh_token" }
    }

    @Test(arguments: DatabaseEngine.available)
    func aRefreshTokenAppleRefusesEndsTheSessionsLikeConsentRevoked(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess) { $0.refreshValidationInterval = .seconds(1) }) { fixture in
            let session = try await Self.signInWithCode(fixture, sub: Self.sub(1))
            #expect(fixture.simulator.revokeConsent(sub: Self.sub(1), clientID: Self.app) > 0)

            let ended = try await eventually(within: .seconds(90)) { try await fixture.harness.get("/api/me", headers: ["Authorization": "Bearer \(session)"]).status == 401 }
            #expect(ended)
            let call = try #require(Self.refreshCalls(fixture.simulator).first)
            #expect(call.parameters["client_id"] == Self.app)
            let credential = try fixture.database.read { try $0.queryOne("SELECT apple_credential FROM users")?.string(0) }
            #expect(credential == "revoked")
            #expect(try fixture.count("apple_tokens") == 0)
            #expect(try fixture.count("sessions") == 0)
            // Counted just after the commit that ended the session.
            #expect(try await eventually(within: .seconds(90)) { fixture.harness.application.metrics.refreshValidations.count("revoked") == 1 })

            // Signing in again restores the same account.
            let again = try fixture.simulator.issueCode(sub: Self.sub(1), clientID: Self.app, nonce: "m").identityToken
            let restored = try await fixture.signIn([("identity_token", .string(again)), ("nonce", .string("m"))])
            #expect(restored.json?["created"] == .bool(false))
            #expect(restored.json?["user"]?.object?["apple_credential"]?.string == "authorized")
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func whileAppleFailsNothingEndsAndTheTokenIsCheckedAgainLater(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess) { $0.refreshValidationInterval = .seconds(1) }) { fixture in
            let session = try await Self.signInWithCode(fixture, sub: Self.sub(2))
            fixture.simulator.injectFault(SimulatorFault(endpoint: .token, status: 503, count: 2))
            let metrics = fixture.harness.application.metrics
            #expect(try await eventually(within: .seconds(90)) { metrics.refreshValidations.count("valid") >= 1 })
            #expect(metrics.refreshValidations.count("retry") == 2)
            #expect(metrics.refreshValidations.count("revoked") == 0)
            await #expect(try fixture.harness.get("/api/me", headers: ["Authorization": "Bearer \(session)"]).status == 200)
            let validatedAt = try fixture.database.read { try $0.queryOne("SELECT validated_at FROM apple_tokens")?.optionalInt64(0) }
            #expect(validatedAt != nil)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aUserWithoutALiveSessionIsNotAskedAbout(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess) { $0.refreshValidationInterval = .seconds(1) }) { fixture in
            let session = try await Self.signInWithCode(fixture, sub: Self.sub(3))
            #expect(try await fixture.harness.send(.post, "/api/logout", bearer: session).status == 204)
            let metrics = fixture.harness.application.metrics
            // The validator has looked at the token (it was due) and let it be.
            let schedule = fixture.harness.application.store.refreshSchedule
            #expect(try await eventually(within: .seconds(90)) { try await (schedule.dueAt(userID: fixture.onlyUserID()) ?? 0) > Int64(Date().timeIntervalSince1970) })
            #expect(Self.refreshCalls(fixture.simulator).isEmpty)
            #expect(metrics.refreshValidations.count("valid") == 0)
        }
    }

    /// One batch asks Apple about at most `maxPerSecond` users, one after the other.
    @Test(arguments: DatabaseEngine.available)
    func aBatchIsBoundedByTheRate(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess) { $0.refreshValidationInterval = .zero }) { fixture in
            for n in 10..<17 { _ = try await Self.signInWithCode(fixture, sub: Self.sub(n)) }
            let application = fixture.harness.application
            let validator = RefreshValidator(
                api: try #require(application.apple.api), store: application.store, interval: 60, idleTTL: 86_400, maxPerSecond: 3,
                metrics: application.metrics.accounts, logger: .init(label: "test"), clock: { Int64(Date().timeIntervalSince1970) + 120 })
            let first = await validator.runOnce()
            #expect(first.count == 3)
            #expect(first.values.allSatisfy { $0 == .valid })
            #expect(Self.refreshCalls(fixture.simulator).count == 3)
            let rest = await validator.runOnce().count + validator.runOnce().count + validator.runOnce().count
            #expect(rest == 4)
            #expect(Self.refreshCalls(fixture.simulator).count == 7)
            #expect(await validator.runOnce().isEmpty)
        }
    }
}

extension NativeSignInTests.Fixture {
    func onlyUserID() throws -> String {
        try database.read { try $0.queryOne("SELECT id FROM users")?.string(0) } ?? ""
    }
}
