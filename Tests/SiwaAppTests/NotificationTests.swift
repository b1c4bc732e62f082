import AppleSimulator
import Foundation
import HTTPServer
import Store
import Testing
@testable import SiwaApp

/// `POST /apple/notifications` end to end: the simulator signs what Apple would send, the
/// running application applies it, and the database shows the effect (docs/reference/http-api.md).
@Suite struct NotificationTests {
    static let clientID = "com.example.app"

    /// The application on the test harness (`TestApp`), in process unless told otherwise, with
    /// Apple's keys loaded.
    final class Fixture: Stoppable {
        let app: TestApp
        /// The name the suite used before `TestApp`: its application and simulator.
        var harness: TestApp { app }
        /// SQL on the application's own store (no second handle on its file).
        let database: StoreSQL

        init(engine: DatabaseEngine = .sqlite, transport: Transport = .inProcess) async throws {
            app = try await TestApp(engine: engine, transport: transport) { $0.clientIDs = [NotificationTests.clientID] }
            do {
                try await app.waitUntilReady()
            } catch {
                await app.stop()
                throw error
            }
            database = StoreSQL(app.store)
        }

        /// Runs `body` with a fresh fixture and stops it at scope exit, whatever happened.
        static func with(engine: DatabaseEngine, transport: Transport = .inProcess, _ body: (Fixture) async throws -> Void) async throws {
            try await withFixture(Fixture(engine: engine, transport: transport), body)
        }

        /// A user as a sign-in would have left it, with a live session and stored Apple tokens.
        func signedInUser(sub: String, email: String = "relay@privaterelay.appleid.com") async throws -> (user: UserRecord, sessionToken: String) {
            try await database.write { connection in
                let (user, _) = try UserStore.upsertOnSignIn(
                    in: connection, identity: VerifiedIdentity(appleSub: sub, email: email, emailVerified: true, isPrivateEmail: true),
                    profile: nil, now: 1_800_000_000)
                _ = try connection.run("UPDATE users SET email_forwarding = 'enabled' WHERE id = ?", [.text(user.id)])
                let session = try SessionStore.create(in: connection, userID: user.id, deviceName: "phone", now: 1_800_000_000, ttl: 3600)
                _ = try connection.run(
                    "INSERT INTO apple_tokens(user_id, client_id, refresh_token, updated_at) VALUES (?, ?, ?, 0)",
                    [.text(user.id), .text(NotificationTests.clientID), .blob([0])])
                return (user, session.token)
            }
        }

        func user(sub: String) throws -> UserRecord? {
            try database.read { try UserStore.user(appleSub: sub, in: $0) }
        }

        func count(_ sql: String, _ parameters: [StoreValue]) throws -> Int {
            try database.read { try $0.queryOne(sql, parameters)?.int(0) ?? -1 }
        }

        /// Posts `{"payload": JWS}` as Apple does; returns the status and body.
        func deliver(_ payload: String) async throws -> (status: Int, body: String) {
            try await post(#"{"payload":""# + payload + #""}"#)
        }

        func post(_ body: String) async throws -> (status: Int, body: String) {
            let reply = try await app.send(.post, "/apple/notifications", headers: [("Content-Type", "application/json")], body: body)
            return (reply.status, reply.body)
        }

        func payload(_ type: String, sub: String, email: String? = nil, form: NotificationEvent.EventsForm = .string, clientID: String = NotificationTests.clientID) throws -> String {
            try harness.simulator.notificationPayload(NotificationEvent(type: type, sub: sub, email: email, eventsForm: form, clientID: clientID))
        }

        func stop() async { await app.stop() }
    }

    @Test(arguments: DatabaseEngine.available)
    func emailDisabledAndEnabledChangeForwarding(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine) { fixture in
            let sub = "000100.00000000000000000000000000000100.0100"
            _ = try await fixture.signedInUser(sub: sub)
            let disabled = try await fixture.deliver(try fixture.payload("email-disabled", sub: sub))
            #expect(disabled.status == 200)
            #expect(disabled.body == #"{"status":"processed"}"#)
            #expect(try fixture.user(sub: sub)?.emailForwarding == .disabled)
            let enabled = try await fixture.deliver(try fixture.payload("email-enabled", sub: sub, email: "new@privaterelay.appleid.com", form: .object))
            #expect(enabled.body == #"{"status":"processed"}"#)
            #expect(try fixture.user(sub: sub)?.emailForwarding == .enabled)
            #expect(try fixture.user(sub: sub)?.email == "new@privaterelay.appleid.com")
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func consentRevokedEndsSessionsAndDropsTokens(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine) { fixture in
            let sub = "000101.00000000000000000000000000000101.0101"
            let (user, _) = try await fixture.signedInUser(sub: sub)
            let response = try await fixture.deliver(try fixture.payload("consent-revoked", sub: sub))
            #expect(response.body == #"{"status":"processed"}"#)
            #expect(try fixture.user(sub: sub)?.appleCredential == .revoked)
            #expect(try fixture.count("SELECT COUNT(*) FROM sessions WHERE user_id = ?", [.text(user.id)]) == 0)
            #expect(try fixture.count("SELECT COUNT(*) FROM apple_tokens WHERE user_id = ?", [.text(user.id)]) == 0)
        }
    }

    @Test(arguments: DatabaseEngine.available, ["account-delete", "account-deleted"])
    func accountDeleteForgetsTheUser(_ engine: DatabaseEngine, _ type: String) async throws {
        try await Fixture.with(engine: engine) { fixture in
            let sub = "000102.00000000000000000000000000000102.0102"
            let (user, _) = try await fixture.signedInUser(sub: sub)
            let response = try await fixture.deliver(try fixture.payload(type, sub: sub, form: .array))
            #expect(response.body == #"{"status":"processed"}"#)
            #expect(try fixture.user(sub: sub) == nil)
            #expect(try fixture.count("SELECT COUNT(*) FROM sessions WHERE user_id = ?", [.text(user.id)]) == 0)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aRedeliveryChangesNothing(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine) { fixture in
            let sub = "000103.00000000000000000000000000000103.0103"
            _ = try await fixture.signedInUser(sub: sub)
            let payload = try fixture.payload("email-disabled", sub: sub)
            await #expect(try fixture.deliver(payload).body == #"{"status":"processed"}"#)
            // Forwarding is switched back on by hand; a redelivery of the old event must not undo it.
            _ = try await fixture.database.write { try $0.run("UPDATE users SET email_forwarding = 'enabled' WHERE apple_sub = ?", [.text(sub)]) }
            await #expect(try fixture.deliver(payload).body == #"{"status":"duplicate"}"#)
            #expect(try fixture.user(sub: sub)?.emailForwarding == .enabled)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func unknownSubjectsAndTypesAreIgnoredWith200(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine) { fixture in
            let unknown = try await fixture.deliver(try fixture.payload("email-disabled", sub: "000999.00000000000000000000000000000999.0999"))
            #expect(unknown.status == 200)
            #expect(unknown.body == #"{"status":"ignored"}"#)
            let sub = "000104.00000000000000000000000000000104.0104"
            _ = try await fixture.signedInUser(sub: sub)
            let odd = try await fixture.deliver(try fixture.payload("something-new", sub: sub))
            #expect(odd.body == #"{"status":"ignored"}"#)
            #expect(try fixture.user(sub: sub)?.emailForwarding == .enabled)
            let metrics = try await fixture.app.send(.get, "/metrics").body
            #expect(metrics.contains(#"siwa_notifications_total{type="unknown",outcome="ignored"} 1"#))
            #expect(metrics.contains(#"siwa_notifications_total{type="email-disabled",outcome="ignored"} 1"#))
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func badBodiesAndBadTokensAreRefusedAndChangeNothing(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine) { fixture in
            let sub = "000105.00000000000000000000000000000105.0105"
            _ = try await fixture.signedInUser(sub: sub)
            for body in ["not json", "{}", #"{"payload":42}"#, "[]"] {
                let response = try await fixture.post(body)
                #expect(response.status == 400)
                #expect(response.body.hasPrefix(#"{"error":"invalid_request""#))
            }
            let malformed = try await fixture.deliver("a.b.c")
            #expect(malformed.status == 400)
            #expect(malformed.body == #"{"error":"invalid_token","error_description":"malformed"}"#)
            let foreign = try await fixture.deliver(try fixture.payload("email-disabled", sub: sub, clientID: "com.attacker.app"))
            #expect(foreign.body == #"{"error":"invalid_token","error_description":"wrong_audience"}"#)
            // A forged signature: the payload of one token with the signature of another.
            let first = try fixture.payload("email-disabled", sub: sub).split(separator: ".")
            let second = try fixture.payload("consent-revoked", sub: sub).split(separator: ".")
            let forged = try await fixture.deliver("\(first[0]).\(second[1]).\(first[2])")
            #expect(forged.body == #"{"error":"invalid_token","error_description":"bad_signature"}"#)
            #expect(try fixture.user(sub: sub)?.emailForwarding == .enabled)
            #expect(try fixture.user(sub: sub)?.appleCredential == .authorized)
        }
    }

    /// The socket sample: the simulator posts to the listening server as Apple would.
    @Test(arguments: DatabaseEngine.available)
    func deliveryFromTheSimulatorIsAcknowledged(_ engine: DatabaseEngine) async throws {
        try await Fixture.with(engine: engine, transport: .socket) { fixture in
            let sub = "000106.00000000000000000000000000000106.0106"
            _ = try await fixture.signedInUser(sub: sub)
            let url = "http://127.0.0.1:\(fixture.harness.application.port)/apple/notifications"
            let result = try await fixture.harness.simulator.notify(NotificationEvent(type: "consent-revoked", sub: sub, clientID: NotificationTests.clientID), to: url)
            #expect(result.status == 200)
            #expect(try fixture.user(sub: sub)?.appleCredential == .revoked)
        }
    }
}
