import AppleSimulator
import Foundation
import JSON
import Testing
@testable import SiwaApp

/// `POST /api/auth/apple` end to end against the simulator (docs/reference/http-api.md "Native sign-in"), in process on
/// both engines with a socket sample.
@Suite struct NativeSignInTests {
    static let app = "com.example.app"

    final class Fixture: Stoppable {
        let harness: TestApp
        /// SQL on the application's own store (no second handle on its file).
        let database: StoreSQL

        /// Over the socket unless told otherwise: the suites that borrow it send what only a
        /// connection carries.
        init(
            engine: DatabaseEngine = .sqlite, transport: Transport = .socket, configure: (inout Configuration) -> Void = { _ in }
        ) async throws {
            harness = try await TestApp(engine: engine, transport: transport) {
                $0.clientIDs = [NativeSignInTests.app, "com.example.web"]
                configure(&$0)
            }
            _ = try await harness.waitUntilReady()
            database = StoreSQL(harness.application.store)
        }

        var simulator: AppleIDSimulator { harness.simulator }

        func signIn(_ body: [(String, JSONValue)]) async throws -> (status: Int, json: JSONObject?, body: String) {
            let text = JSONWriter.string(.object(JSONObject(body)))
            let reply = try await harness.send(.post, "/api/auth/apple", headers: [("Content-Type", "application/json")], body: text)
            return (reply.status, reply.json, reply.body)
        }

        func count(_ table: String) throws -> Int {
            try database.read { try $0.queryOne("SELECT COUNT(*) FROM \(table)", [])?.int(0) ?? -1 }
        }

        func stop() async {
            database.close()
            await harness.stop()
        }
    }

    static func sub(_ n: Int) -> String { "000300.\(String(repeating: "0", count: 29))\(100 + n).0300" }

    /// The socket sample.
    @Test(arguments: DatabaseEngine.available, Transport.allCases)
    func aTokenAloneCreatesTheUserAndASessionThatWorks(_ engine: DatabaseEngine, _ transport: Transport) async throws {
        try await withFixture(Fixture(engine: engine, transport: transport)) { fixture in
            let token = try fixture.simulator.issueCode(sub: Self.sub(1), clientID: Self.app, nonce: "n-1", email: "ada@privaterelay.appleid.com", isPrivateEmail: true).identityToken
            let reply = try await fixture.signIn([
                ("identity_token", .string(token)), ("nonce", .string("n-1")), ("device_name", .string("Ada's iPhone")),
                ("user", .object(JSONObject([("name", .object(JSONObject([("firstName", .string("Ada")), ("lastName", .string("Lovelace"))])))]))),
            ])
            #expect(reply.status == 200, "\(reply.body)")
            #expect(reply.json?["created"] == .bool(true))
            let user = try #require(reply.json?["user"]?.object)
            #expect(user["apple_sub"]?.string == Self.sub(1))
            #expect(user["email"]?.string == "ada@privaterelay.appleid.com")
            #expect(user["email_verified"] == .bool(true))
            #expect(user["name"]?.object?["given"]?.string == "Ada")
            #expect(user["real_user_status"]?.string == "likely_real")
            let session = try #require(reply.json?["session"]?.object?["token"]?.string)
            let me = try await fixture.harness.get("/api/me", headers: ["Authorization": "Bearer \(session)"])
            #expect(me.status == 200)
            #expect(me.body.contains(Self.sub(1)))

            // The next sign-in (no `user` this time) finds the same account and keeps the name.
            let again = try fixture.simulator.issueCode(sub: Self.sub(1), clientID: Self.app, nonce: "n-2").identityToken
            let second = try await fixture.signIn([("identity_token", .string(again)), ("nonce", .string("n-2"))])
            #expect(second.json?["created"] == .bool(false))
            #expect(second.json?["user"]?.object?["name"]?.object?["given"]?.string == "Ada")
        }
    }

    /// Relay status comes from the token's `is_private_email`, never from the address's domain
    /// (new relay addresses are at `private.icloud.com`): a relay at the new domain is a relay
    /// (forwarding on), an address at the old relay domain the token calls not private is not.
    @Test(arguments: DatabaseEngine.available, [
        ("ada@private.icloud.com", true, "enabled"),
        ("ada@privaterelay.appleid.com", false, nil),
        ("ada@privaterelay.appleid.com", true, "enabled"),
    ] as [(String, Bool, String?)])
    func relayStatusIsTheTokensFlagNotTheDomain(_ engine: DatabaseEngine, _ relay: (String, Bool, String?)) async throws {
        let (email, isPrivate, forwarding) = relay
        try await withFixture(Fixture(engine: engine, transport: .inProcess)) { fixture in
            let token = try fixture.simulator.issueCode(
                sub: Self.sub(7), clientID: Self.app, nonce: "n-7", email: email, isPrivateEmail: isPrivate).identityToken
            let reply = try await fixture.signIn([("identity_token", .string(token)), ("nonce", .string("n-7"))])
            #expect(reply.status == 200, "\(reply.body)")
            let user = try #require(reply.json?["user"]?.object)
            #expect(user["email"]?.string == email)
            #expect(user["is_private_email"] == .bool(isPrivate))
            #expect(user["email_forwarding"]?.string == forwarding)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func theSameTokenNeverMakesASecondSession(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine, transport: .inProcess)) { fixture in
            let token = try fixture.simulator.issueCode(sub: Self.sub(2), clientID: Self.app, nonce: "n").identityToken
            await #expect(try fixture.signIn([("identity_token", .string(token)), ("nonce", .string("n"))]).status == 200)
            let replay = try await fixture.signIn([("identity_token", .string(token)), ("nonce", .string("n"))])
            #expect(replay.status == 401)
            #expect(replay.body == #"{"error":"invalid_token","error_description":"replayed"}"#)
            #expect(try fixture.count("sessions") == 1)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aCodeIsExchangedOnceAndTheTokensAreStoredSealed(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine, transport: .inProcess)) { fixture in
            let issued = try fixture.simulator.issueCode(sub: Self.sub(3), clientID: Self.app, nonce: "n")
            let reply = try await fixture.signIn([
                ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string("n")),
            ])
            #expect(reply.status == 200, "\(reply.body)")
            let exchanges = fixture.simulator.calls.filter { $0.endpoint == "token" }
            #expect(exchanges.count == 1)
            #expect(exchanges.first?.parameters["client_id"] == Self.app)
            #expect(exchanges.first?.parameters["redirect_uri"] == nil)
            let stored = try fixture.database.read { try $0.queryOne("SELECT client_id, refresh_token FROM apple_tokens", []) }
            #expect(try stored?.string("client_id") == Self.app)
            let sealed = try #require(try stored?.blob("refresh_token"))
            #expect(!String(decoding: sealed, as: UTF8.self).contains(".0."))
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aRefusedCodeCreatesNothingButKeepsTheNameForTheNextSignIn(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine, transport: .inProcess)) { fixture in
            let issued = try fixture.simulator.issueCode(sub: Self.sub(4), clientID: Self.app, nonce: "n")
            fixture.simulator.injectFault(SimulatorFault(endpoint: .token, status: 400, error: "invalid_grant"))
            let reply = try await fixture.signIn([
                ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string("n")),
                ("user", .object(JSONObject([("name", .object(JSONObject([("firstName", .string("Grace"))])))]))),
            ])
            #expect(reply.status == 401)
            #expect(reply.body.hasPrefix(#"{"error":"invalid_grant""#))
            #expect(try fixture.count("users") == 0)
            #expect(try fixture.count("sessions") == 0)
            let later = try fixture.simulator.issueCode(sub: Self.sub(4), clientID: Self.app, nonce: "m").identityToken
            let adopted = try await fixture.signIn([("identity_token", .string(later)), ("nonce", .string("m"))])
            #expect(adopted.status == 200)
            #expect(adopted.json?["user"]?.object?["name"]?.object?["given"]?.string == "Grace")
            #expect(adopted.json?["user"]?.object?["name"]?.object?["family"] == .null)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func appleBeingDownIs502AndCreatesNothing(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine, transport: .inProcess)) { fixture in
            let issued = try fixture.simulator.issueCode(sub: Self.sub(5), clientID: Self.app, nonce: "n")
            fixture.simulator.injectFault(SimulatorFault(endpoint: .token, status: 503))
            let reply = try await fixture.signIn([
                ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string("n")),
            ])
            #expect(reply.status == 502)
            #expect(reply.body.hasPrefix(#"{"error":"apple_unavailable""#))
            #expect(try fixture.count("users") == 0)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func refusedTokensNameTheReasonAndCreateNothing(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine, transport: .inProcess)) { fixture in
            let token = try fixture.simulator.issueCode(sub: Self.sub(6), clientID: Self.app, nonce: "right").identityToken
            let mismatch = try await fixture.signIn([("identity_token", .string(token)), ("nonce", .string("wrong"))])
            #expect(mismatch.body == #"{"error":"invalid_token","error_description":"nonce_mismatch"}"#)
            let missing = try await fixture.signIn([("identity_token", .string(token))])
            #expect(missing.body == #"{"error":"invalid_token","error_description":"nonce_missing"}"#)
            let foreign = try fixture.simulator.issueCode(sub: Self.sub(6), clientID: "com.other.app", nonce: "right").identityToken
            let audience = try await fixture.signIn([("identity_token", .string(foreign)), ("nonce", .string("right"))])
            #expect(audience.body == #"{"error":"invalid_token","error_description":"wrong_audience"}"#)
            let issued = try fixture.simulator.issueCode(sub: Self.sub(6), clientID: Self.app, nonce: "right")
            let code = try await fixture.signIn([
                ("identity_token", .string(issued.identityToken)), ("authorization_code", .string("another-code")), ("nonce", .string("right")),
            ])
            #expect(code.body == #"{"error":"invalid_token","error_description":"code_mismatch"}"#)
            #expect(fixture.simulator.calls.filter { $0.endpoint == "token" }.isEmpty)
            #expect(try fixture.count("users") == 0)
        }
    }

    @Test(arguments: DatabaseEngine.available, ["not json", "{}", #"{"identity_token":""}"#, #"{"identity_token":5}"#, #"{"identity_token":"a.b.c","nonce":7}"#, #"{"identity_token":"a.b.c","user":"x"}"#])
    func malformedRequestsAre400(_ engine: DatabaseEngine, _ body: String) async throws {
        try await withFixture(Fixture(engine: engine, transport: .inProcess)) { fixture in
            let reply = try await fixture.harness.send(.post, "/api/auth/apple", body: body)
            #expect(reply.status == 400)
            #expect(reply.body.contains(#"{"error":"invalid_request""#))
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aServerIssuedNonceWorksOnce(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine, transport: .inProcess)) { fixture in
            let nonce = try #require(try await fixture.harness.send(.post, "/api/auth/apple/nonce").json?["nonce"]?.string)
            let first = try fixture.simulator.issueCode(sub: Self.sub(7), clientID: Self.app, nonce: nonce).identityToken
            await #expect(try fixture.signIn([("identity_token", .string(first)), ("nonce", .string(nonce))]).status == 200)
            let second = try fixture.simulator.issueCode(sub: Self.sub(7), clientID: Self.app, nonce: nonce).identityToken
            let reused = try await fixture.signIn([("identity_token", .string(second)), ("nonce", .string(nonce))])
            #expect(reused.body == #"{"error":"invalid_token","error_description":"replayed"}"#)
        }
    }
}
