import AppleSimulator
import Foundation
import HTTPServer
import JSON
import Testing
import TestSupport
@testable import SiwaApp
@testable import Store

/// docs/guides/passwords-and-email.md's server in process, on either engine, with a held clock and a webhook
/// receiver standing in for the team's backend (where codes arrive).
final class EmailVerificationFixture: @unchecked Sendable, Stoppable {
    typealias Reply = PasswordRoutesTests.Reply
    static let app = PasswordRoutesTests.app

    let harness: TestApp
    let clock: HeldClock
    let receiver: WebhookReceiver

    init(_ engine: DatabaseEngine) async throws {
        let clock = HeldClock(Int64(Date().timeIntervalSince1970))
        self.clock = clock
        let receiver = try WebhookReceiver()
        self.receiver = receiver
        harness = try await TestApp(engine: engine, clock: clock) {
            $0.clientIDs = [Self.app]
            $0.publicURL = "http://localhost:8080"
            $0.webhookURL = receiver.url
            $0.webhookSecret = receiver.secretBytes
        }
        _ = try await harness.waitUntilReady()
    }

    var simulator: AppleIDSimulator { harness.simulator }
    var store: Store { harness.application.store }

    func send(_ method: String, _ path: String, _ body: [(String, JSONValue)]? = nil, token: String? = nil) async throws -> Reply {
        let text = body.map { JSONWriter.string(.object(JSONObject($0))) } ?? ""
        let headers: [(String, String)] = body == nil ? [] : [("Content-Type", "application/json")]
        let reply = try await harness.send(HTTPMethod(method), path, bearer: token, headers: headers, body: text)
        return Reply(status: reply.status, headers: reply.headers, body: reply.body)
    }

    func signUp(_ email: String, _ password: String = "correct horse battery") async throws -> Reply {
        try await send("POST", "/api/auth/password/sign-up", [("email", .string(email)), ("password", .string(password))])
    }

    func signIn(_ email: String, _ password: String = "correct horse battery") async throws -> Reply {
        try await send("POST", "/api/auth/password", [("email", .string(email)), ("password", .string(password))])
    }

    /// A fresh identity token (and its code) from the simulator, as the phone would get it.
    func apple(_ sub: String, email: String? = nil, relay: Bool? = nil) throws -> [(String, JSONValue)] {
        let nonce = UUID().uuidString
        let issued = try simulator.issueCode(sub: sub, clientID: Self.app, nonce: nonce, email: email, isPrivateEmail: relay)
        return [("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string(nonce))]
    }

    func appleSignIn(_ sub: String, email: String? = nil, relay: Bool? = nil) async throws -> Reply {
        try await send("POST", "/api/auth/apple", try apple(sub, email: email, relay: relay))
    }

    func link(_ sub: String, email: String? = nil, token: String?) async throws -> Reply {
        try await send("POST", "/api/account/apple", try apple(sub, email: email), token: token)
    }

    func requestReset(_ email: String) async throws -> Reply {
        try await send("POST", "/api/auth/password/reset-request", [("email", .string(email))])
    }

    func reset(_ code: String, _ password: String) async throws -> Reply {
        try await send("POST", "/api/auth/password/reset", [("code", .string(code)), ("new_password", .string(password))])
    }

    /// The codes of `type` the backend got so far (waiting for `count` of them).
    func codes(_ type: String, _ count: Int) async throws -> [[String: String]] {
        try #require(await receiver.codeRequests(type, count), "\(count) \(type) expected")
    }

    func count(_ table: String, _ condition: String = "1 = 1") async throws -> Int {
        try await store.engine.read { try $0.queryOne("SELECT COUNT(*) FROM \(table) WHERE \(condition)")?.int(0) ?? -1 }
    }

    func execute(_ sql: String) async throws {
        try await store.engine.write { _ = try $0.run(sql, []) }
    }

    /// The events delivered so far, in order: `type` and `data`.
    var events: [(type: String, data: [String: Any])] {
        receiver.deliveries.filter(\.accepted).map { ($0.type, $0.json?["data"] as? [String: Any] ?? [:]) }
    }

    func stop() async {
        await harness.stop()
        receiver.stop()
    }

    static func sub(_ n: Int) -> String { "000901.\(String(repeating: "0", count: 29))\(100 + n).0901" }
}
