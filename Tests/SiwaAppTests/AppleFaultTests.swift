import AppleSimulator
import JSON
import Testing

/// Apple's endpoints broken in every way the simulator can break them. The token endpoint during
/// a sign-in with a code: 502 `apple_unavailable`, nothing created, and once Apple answers again
/// a fresh code signs in. The revoke endpoint during a deletion: the revocation is queued and
/// retried until done (docs/RELIABILITY.md: Apple failing is a clear error, never a half-made account).
@Suite struct AppleFaultTests {
    static let faults: [SimulatorFault] = [
        SimulatorFault(endpoint: .token, status: 503),
        SimulatorFault(endpoint: .token, status: 500, error: "server_error"),
        SimulatorFault(endpoint: .token, status: 502, body: .garbage),
        SimulatorFault(endpoint: .token, status: 200, body: .garbage),
        SimulatorFault(endpoint: .token, body: .truncated),
        SimulatorFault(endpoint: .token, status: 429),
    ]

    @Test(arguments: faults)
    func aBrokenTokenEndpointIs502AndCreatesNothing(_ fault: SimulatorFault) async throws {
        try await withFixture(NativeSignInTests.Fixture(transport: .inProcess)) { fixture in
            let sub = NativeSignInTests.sub(40)
            let first = try fixture.simulator.issueCode(sub: sub, clientID: NativeSignInTests.app, nonce: "n-1")
            fixture.simulator.injectFault(fault)
            let refused = try await fixture.signIn([
                ("identity_token", .string(first.identityToken)), ("authorization_code", .string(first.code)), ("nonce", .string("n-1")),
            ])
            #expect(refused.status == 502, "\(refused.body)")
            #expect(refused.json?["error"]?.string == "apple_unavailable")
            for table in ["users", "sessions", "apple_tokens"] { #expect(try fixture.count(table) == 0, "\(table)") }

            let second = try fixture.simulator.issueCode(sub: sub, clientID: NativeSignInTests.app, nonce: "n-2")
            let accepted = try await fixture.signIn([
                ("identity_token", .string(second.identityToken)), ("authorization_code", .string(second.code)), ("nonce", .string("n-2")),
            ])
            #expect(accepted.status == 200, "\(accepted.body)")
            #expect(accepted.json?["created"]?.bool == true)
            #expect(try fixture.count("apple_tokens") == 1)
        }
    }

    static let revokeFaults: [SimulatorFault] = [
        SimulatorFault(endpoint: .revoke, status: 503, count: 2),
        SimulatorFault(endpoint: .revoke, status: 500, count: 2, error: "server_error"),
        SimulatorFault(endpoint: .revoke, status: 502, count: 2, body: .garbage),
        SimulatorFault(endpoint: .revoke, status: 429, count: 2),
        SimulatorFault(endpoint: .revoke, delayMilliseconds: 1_500, count: 1),
    ]

    /// Apple's revoke endpoint broken during an account deletion: the account is gone at once,
    /// the revocation waits in the durable queue and is retried until Apple accepts it.
    @Test(arguments: revokeFaults)
    func aBrokenRevokeEndpointLeavesTheRevocationQueuedUntilItIsDone(_ fault: SimulatorFault) async throws {
        try await withFixture(NativeSignInTests.Fixture(transport: .inProcess, configure: {
            $0.revocationBackoff = .seconds(1)
            $0.revocationBackoffMax = .seconds(2)
        })) { fixture in
            let (session, _) = try await AccountDeletionTests.signIn(fixture, sub: NativeSignInTests.sub(41), withCode: true)
            fixture.simulator.injectFault(fault)
            let reply = try await AccountDeletionTests.delete(fixture, session: session)
            #expect(reply.status == 202)
            #expect(try fixture.count("users") == 0)
            #expect(try await eventually(within: .seconds(60)) { try fixture.count("revocations") == 0 }, "the revocation was done once Apple answered")
            #expect(fixture.simulator.calls.filter { $0.endpoint == "revoke" }.count >= 1 + (fault.status == nil ? 0 : fault.count))
        }
    }
}

