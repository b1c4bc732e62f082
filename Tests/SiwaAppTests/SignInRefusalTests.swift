import AppleSimulator
import Foundation
import JOSE
import JSON
import Testing
import TestSupport
@testable import SiwaApp

/// Every `invalid_token` reason of docs/reference/http-api.md over real sockets, each with a token built to
/// trigger it (signed with the simulator's key where a signature matters): the reason is the
/// exact `error_description`, it is counted in metrics, and nothing is created.
@Suite struct SignInRefusalTests {
    static let app = NativeSignInTests.app
    static let sub = "000700.00000000000000000000000000000700.0700"

    static func claims(_ changes: [(String, JSONValue?)] = []) -> JSONObject {
        let now = Int64(Date().timeIntervalSince1970)
        var claims = JSONObject([
            ("iss", .string("https://appleid.apple.com")), ("aud", .string(app)), ("exp", .integer(now + 600)),
            ("iat", .integer(now)), ("sub", .string(sub)), ("nonce", .string("n")), ("nonce_supported", .bool(true)),
        ])
        for (name, value) in changes {
            if let value { claims[name] = value } else { claims = JSONObject(claims.members.filter { $0.key != name }) }
        }
        return claims
    }

    @Test(arguments: DatabaseEngine.available)
    func everyReasonIsNamedCountedAndCreatesNothing(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess)) { fixture in
            let simulator = fixture.simulator
            let now = Int64(Date().timeIntervalSince1970)
            let good = try simulator.signToken(claims: Self.claims())
            var tampered = Array(good.utf8)
            let middleOfSignature = tampered.count - 20
            tampered[middleOfSignature] = tampered[middleOfSignature] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")

            let cases: [(reason: String, token: String, extra: [(String, JSONValue)])] = [
                ("malformed", "not-a-jwt", []),
                ("malformed", "e30.W10.e30", []),
                ("unsupported_alg", try simulator.signToken(claims: Self.claims(), header: JSONObject([("alg", .string("HS256"))])), []),
                ("unsupported_alg", try simulator.signToken(claims: Self.claims(), header: JSONObject([("alg", .string("none"))])), []),
                ("unknown_key", try simulator.signToken(claims: Self.claims(), header: JSONObject([("kid", .string("NOPE"))])), []),
                ("bad_signature", String(decoding: tampered, as: UTF8.self), []),
                ("wrong_issuer", try simulator.signToken(claims: Self.claims([("iss", .string("https://appleid.apple.com.evil"))])), []),
                ("wrong_audience", try simulator.signToken(claims: Self.claims([("aud", .string("com.other.app"))])), []),
                ("expired", try simulator.signToken(claims: Self.claims([("iat", .integer(now - 900)), ("exp", .integer(now - 120))])), []),
                ("issued_in_future", try simulator.signToken(claims: Self.claims([("iat", .integer(now + 300)), ("exp", .integer(now + 900))])), []),
                ("nonce_missing", try simulator.signToken(claims: Self.claims([("nonce", nil)])), []),
                ("nonce_mismatch", good, [("nonce", .string("other"))]),
                ("code_mismatch", try simulator.signToken(claims: Self.claims([("c_hash", .string(TokenVerifier.codeHash("code-1")))])),
                 [("authorization_code", .string("code-2"))]),
            ]
            for entry in cases {
                var body: [(String, JSONValue)] = [("identity_token", .string(entry.token)), ("nonce", .string("n"))]
                for (name, value) in entry.extra {
                    body.removeAll { $0.0 == name }
                    body.append((name, value))
                }
                let reply = try await fixture.signIn(body)
                #expect(reply.status == 401, "\(entry.reason)")
                #expect(reply.body == #"{"error":"invalid_token","error_description":"\#(entry.reason)"}"#)
            }
            #expect(try fixture.count("users") == 0)
            #expect(try fixture.count("sessions") == 0)
            #expect(fixture.simulator.calls.filter { $0.endpoint == "token" }.isEmpty)
            let metrics = try await fixture.harness.get("/metrics").body
            for reason in Set(cases.map(\.reason)) {
                #expect(metrics.contains(#"siwa_token_verification_failures_total{reason="\#(reason)"}"#), "\(reason)")
            }

            // replayed: the good token works once.
            await #expect(try fixture.signIn([("identity_token", .string(good)), ("nonce", .string("n"))]).status == 200)
            let replay = try await fixture.signIn([("identity_token", .string(good)), ("nonce", .string("n"))])
            #expect(replay.body == #"{"error":"invalid_token","error_description":"replayed"}"#)
            #expect(try fixture.count("sessions") == 1)
        }
    }

    /// A signed `exp` near 2^63 once crashed the whole process (overflow adding the leeway);
    /// an `aud` array that also names someone else once passed. Both are refused, over a real
    /// socket, and the server goes on serving.
    @Test(arguments: [
        ("malformed", [("exp", JSONValue.integer(Int64.max - 1))]),
        ("malformed", [("iat", .integer(Int64.max))]),
        ("malformed", [("auth_time", .integer(Int64.min))]),
        ("wrong_audience", [("aud", .array([.string(app), .string("com.attacker.app")]))]),
    ])
    func hostileClaimsAreRefusedAndTheServerLivesOn(_ reason: String, _ changes: [(String, JSONValue)]) async throws {
        try await withFixture(NativeSignInTests.Fixture(transport: .socket)) { fixture in
            let token = try fixture.simulator.signToken(claims: Self.claims(changes.map { ($0.0, $0.1) }))
            let reply = try await fixture.signIn([("identity_token", .string(token)), ("nonce", .string("n"))])
            #expect(reply.status == 401)
            #expect(reply.body == #"{"error":"invalid_token","error_description":"\#(reason)"}"#)
            #expect(try await fixture.harness.get("/healthz").body == #"{"status":"ok"}"#)
            #expect(try fixture.count("users") == 0)
            #expect(try fixture.count("sessions") == 0)
        }
    }

    /// docs/reference/http-api.md: with `require_nonce` off, a request without a nonce for a token without one is
    /// accepted whatever `nonce_supported` says.
    @Test(arguments: DatabaseEngine.available)
    func withoutRequireNonceATokenWithoutANonceSignsIn(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess) { $0.requireNonce = false }) { fixture in
            let token = try fixture.simulator.signToken(claims: Self.claims([("nonce", nil), ("nonce_supported", .bool(true))]))
            let reply = try await fixture.signIn([("identity_token", .string(token))])
            #expect(reply.status == 200, "\(reply.body)")
        }
    }

    /// Apple exchanges the code for another person's grant: refused, nothing kept, and the
    /// grant Apple made is revoked through the queue.
    @Test(arguments: DatabaseEngine.available)
    func aCodeOfAnotherSubjectIsSubjectMismatchAndItsGrantIsRevoked(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess)) { fixture in
            let simulator = fixture.simulator
            let someoneElse = try simulator.issueCode(sub: "000701.00000000000000000000000000000701.0701", clientID: Self.app, nonce: "n")
            let token = try simulator.signToken(claims: Self.claims([("c_hash", .string(TokenVerifier.codeHash(someoneElse.code)))]))
            let reply = try await fixture.signIn([
                ("identity_token", .string(token)), ("authorization_code", .string(someoneElse.code)), ("nonce", .string("n")),
            ])
            #expect(reply.body == #"{"error":"invalid_token","error_description":"subject_mismatch"}"#)
            #expect(try fixture.count("users") == 0)
            #expect(try fixture.count("apple_tokens") == 0)
            #expect(try await eventually { simulator.calls.contains { $0.endpoint == "revoke" && $0.parameters["token_type_hint"] == "refresh_token" } })
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func withoutAppleKeysItIs503KeysUnavailable(_ engine: DatabaseEngine) async throws {
        try await withApp(engine: engine, configure: {
            $0.clientIDs = [Self.app]
            $0.appleBaseURL = "http://127.0.0.1:1"
        }) { harness in
            let token = try harness.simulator.signToken(claims: Self.claims())
            let body = JSONWriter.string(.object(JSONObject([("identity_token", .string(token)), ("nonce", .string("n"))])))
            let reply = try await harness.send(.post, "/api/auth/apple", body: body)
            #expect(reply.status == 503)
            #expect(reply.body.contains(#"{"error":"keys_unavailable""#))
        }
    }
}
