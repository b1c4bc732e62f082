import HTTPServer
import OpenSSLCrypto
import Testing
import WireFormat
@testable import SiwaApp

/// The demo's own webhook receiver: it keeps an event only when its Standard Webhooks
/// signature checks out, shows each once, newest first, escaped.
@Suite struct DemoWebhookReceiverTests {
    static let secret = [UInt8](repeating: 7, count: 32)
    static let now: Int64 = 1_900_000_000

    static func request(id: String, body: String, timestamp: Int64 = now, key: [UInt8] = secret) -> HTTPRequest {
        let signature = Base64.standard.encode(HMACSHA256.mac(key: key, message: Array("\(id).\(timestamp).\(body)".utf8)))
        return HTTPRequest(
            .post, DemoWebhookReceiver.path,
            headers: ["webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": "v0,xyz v1,\(signature)"],
            body: Array(body.utf8))
    }

    @Test func aSignedEventIsKeptOnceAndShownEscaped() {
        let receiver = DemoWebhookReceiver(secret: Self.secret, clock: { Self.now })
        let body = #"{"type":"user.deleted","timestamp":"2030-03-17T17:46:40Z","data":{"id":"usr_1","reason":"<b>x</b>"}}"#
        #expect(receiver.receive(Self.request(id: "msg_1", body: body)).status == 204)
        #expect(receiver.receive(Self.request(id: "msg_1", body: body)).status == 204, "a redelivery is acknowledged")
        #expect(receiver.received.map(\.id) == ["msg_1"])
        #expect(receiver.received.first?.type == "user.deleted")
        let page = receiver.page()
        #expect(page.contains("user.deleted"))
        #expect(page.contains("&lt;b&gt;x&lt;/b&gt;") && !page.contains("<b>x</b>"))
    }

    @Test func aBadSignatureAStaleTimestampOrMissingHeadersAreRefused() {
        let receiver = DemoWebhookReceiver(secret: Self.secret, clock: { Self.now })
        let body = #"{"type":"user.created"}"#
        #expect(receiver.receive(Self.request(id: "msg_2", body: body, key: [UInt8](repeating: 8, count: 32))).status == 401)
        #expect(receiver.receive(Self.request(id: "msg_3", body: body, timestamp: Self.now - 301)).status == 401)
        #expect(receiver.receive(HTTPRequest(.post, DemoWebhookReceiver.path, body: Array(body.utf8))).status == 401)
        // The signature covers the id: the same body under another id does not verify.
        var moved = Self.request(id: "msg_4", body: body)
        moved.head.headers.set("webhook-id", "msg_5")
        #expect(receiver.receive(moved).status == 401)
        #expect(receiver.received.isEmpty)
    }

    @Test func onlyTheLastTwentyAreKept() {
        let receiver = DemoWebhookReceiver(secret: Self.secret, clock: { Self.now })
        for index in 0..<25 { _ = receiver.receive(Self.request(id: "msg_\(index)", body: #"{"type":"user.updated"}"#)) }
        #expect(receiver.received.count == 20)
        #expect(receiver.received.first?.id == "msg_24", "newest first")
    }
}
