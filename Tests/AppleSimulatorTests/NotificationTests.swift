import AppleSimulator
import HTTPClient
import HTTPServer
import JOSE
import JSON
import Synchronization
import Testing

/// A receiver for server-to-server notifications on a free loopback port.
final class NotificationReceiver: Sendable {
    struct Delivery: Sendable {
        let contentType: String?
        let authorization: String?
        let body: [UInt8]
    }

    private final class Inbox: Sendable {
        let deliveries = Mutex<[Delivery]>([])
    }

    private let server: HTTPServer
    private let inbox = Inbox()
    let url: String

    init(status: Int = 200) throws {
        var router = Router()
        let inbox = self.inbox
        router.add(.post, "/apple/notifications") { request in
            inbox.deliveries.withLock {
                $0.append(Delivery(contentType: request.headers["Content-Type"], authorization: request.headers["Authorization"], body: request.body))
            }
            return HTTPResponse(status: status, contentType: "text/plain", body: "ok")
        }
        server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 1), router: router)
        let port = try server.start()
        url = "http://127.0.0.1:\(port)/apple/notifications"
    }

    var deliveries: [Delivery] { inbox.deliveries.withLock { $0 } }

    func stop() async { await server.stop() }
}

@Suite struct NotificationTests {
    static let sub = "000123.0123456789abcdef0123456789abcdef.0123"

    func deliver(
        _ harness: SimulatorHarness, _ receiver: NotificationReceiver, type: String, extra: [(String, JSONValue)] = []
    ) async throws -> (response: JSONObject, claims: JSONObject) {
        let before = receiver.deliveries.count
        let response = try await harness.postJSON(
            "/sim/notify", [("url", .string(receiver.url)), ("type", .string(type)), ("sub", .string(Self.sub))] + extra)
        #expect(response.status == 200, "\(response.text)")
        let answer = try response.jsonObject()
        #expect(answer["status"]?.integer == 200)
        let deliveries = receiver.deliveries
        #expect(deliveries.count == before + 1)
        let delivery = try #require(deliveries.last)
        #expect(delivery.contentType?.hasPrefix("application/json") == true)
        #expect(delivery.authorization == nil, "Apple sends no auth header")
        let body = try #require(try JSONParser.parse(delivery.body).object)
        #expect(body.keys == ["payload"])
        let payload = try #require(body["payload"]?.string)
        let keys = try await harness.keySet()
        let jws = try CompactJWS(payload)
        #expect(jws.algorithm == "RS256")
        let kid = try #require(jws.keyID)
        let key = try #require(keys[kid], "signed with a published key")
        #expect(key.verifyRS256(signature: jws.signature, message: jws.signingInput))
        #expect(jws.payload["sub"] == nil, "Apple puts sub only inside the event")
        let verified = try TokenVerifier.verify(
            payload, keys: { keys[$0] }, policy: .init(kind: .notification, audiences: ["com.example.app"]), now: harness.clock.now)
        #expect(verified.claims.events?.first?.subject == Self.sub)
        #expect(jws.payload["jti"] == answer["jti"])
        return (answer, jws.payload)
    }

    @Test func aNotificationIsASignedJWSWithEventsAsAString() async throws {
        let receiver = try NotificationReceiver()
        try await withSimulator { harness in
            let (_, claims) = try await deliver(harness, receiver, type: "consent-revoked")
            #expect(claims["iss"]?.string == "https://appleid.apple.com")
            #expect(claims["aud"]?.string == "com.example.app")
            let iat = try #require(claims["iat"]?.integer)
            #expect(claims["exp"]?.integer == iat + 86_400)
            let eventsText = try #require(claims["events"]?.string, "events is a JSON-encoded string")
            let event = try #require(try JSONParser.parse(eventsText).object)
            #expect(event["type"]?.string == "consent-revoked")
            #expect(event["sub"]?.string == Self.sub)
            let eventTime = try #require(event["event_time"]?.integer)
            #expect(eventTime / 1000 == harness.clock.now, "event_time is in milliseconds")
            #expect(event["email"] == nil)

            let (_, again) = try await deliver(harness, receiver, type: "consent-revoked")
            #expect(again["jti"] != claims["jti"], "jti is unique per notification")
        }
        await receiver.stop()
    }

    @Test func eventsCanComeAsAnObjectOrAnArray() async throws {
        let receiver = try NotificationReceiver()
        try await withSimulator { harness in
            let (_, object) = try await deliver(harness, receiver, type: "account-delete", extra: [("events_as", .string("object"))])
            #expect(object["events"]?.object?["type"]?.string == "account-delete")
            let (_, array) = try await deliver(harness, receiver, type: "account-delete", extra: [("events_as", .string("array"))])
            #expect(array["events"]?.array?.first?.object?["type"]?.string == "account-delete")
        }
        await receiver.stop()
    }

    @Test func emailEventsCarryTheEmailAndStringFlags() async throws {
        let receiver = try NotificationReceiver()
        try await withSimulator { harness in
            let (_, claims) = try await deliver(
                harness, receiver, type: "email-disabled",
                extra: [("email", .string("abc123@privaterelay.appleid.com")), ("client_id", .string("com.example.app"))])
            let eventsText = try #require(claims["events"]?.string)
            let event = try #require(try JSONParser.parse(eventsText).object)
            #expect(event["email"]?.string == "abc123@privaterelay.appleid.com")
            #expect(event["is_private_email"] == .string("true"))
        }
        await receiver.stop()
    }

    @Test func theReceiversStatusIsReported() async throws {
        let receiver = try NotificationReceiver(status: 503)
        try await withSimulator { harness in
            let response = try await harness.postJSON(
                "/sim/notify", [("url", .string(receiver.url)), ("type", .string("consent-revoked")), ("sub", .string(Self.sub))])
            #expect(try response.jsonObject()["status"]?.integer == 503)
            let missing = try await harness.postJSON("/sim/notify", [("type", .string("consent-revoked"))])
            #expect(missing.status == 400)
            #expect(missing.errorCode == "invalid_request")
        }
        await receiver.stop()
    }
}
