import AppleSimulator
import JSON
import Testing

/// Apple's token endpoint broken in every way the simulator can break it, during a sign-in with a
/// code: the answer is 502 `apple_unavailable`, nothing is created, and once Apple answers
/// again a fresh code signs in (SPEC §5: Apple failing is a clear error, never a half-made account).
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
        let fixture = try await NativeSignInTests.Fixture()
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
        await fixture.stop()
    }
}
