import Accounts
import HTTPServer
import JSON
import OpenSSLCrypto
import Synchronization

/// `siwa-server demo`'s own webhook receiver (issue 10): the demo points `webhook_url` at
/// `POST /demo/webhooks` on itself, checks each event's Standard Webhooks signature as a team's
/// backend would, and `GET /demo/webhooks` shows the last events, so a person can delete their
/// account in the browser and watch `user.deleted` arrive. In the route table only for the demo.
public final class DemoWebhookReceiver: Sendable {
    struct Event: Sendable {
        let id: String
        let type: String
        let receivedAt: Int64
        let body: String
    }

    public static let path = "/demo/webhooks"
    static let kept = 20
    /// Standard Webhooks: a timestamp further than this from now is a replay.
    static let tolerance: Int64 = 300

    private let secret: [UInt8]
    private let clock: @Sendable () -> Int64
    private let events = Mutex<[Event]>([])

    init(secret: [UInt8], clock: @escaping @Sendable () -> Int64) {
        self.secret = secret
        self.clock = clock
    }

    var received: [Event] { events.withLock { $0 } }

    /// `GET /demo/webhooks`: the last events.
    func show(_: HTTPRequest) -> HTTPResponse {
        Pages.response(page(), language: .english)
    }

    /// 204 for an event whose signature checks out; 401 (and nothing kept) otherwise.
    func receive(_ request: HTTPRequest) -> HTTPResponse {
        guard let id = request.headers["webhook-id"], let timestamp = request.headers["webhook-timestamp"],
              let seconds = Int64(timestamp), abs(clock() - seconds) <= Self.tolerance,
              let signatures = request.headers["webhook-signature"]
        else { return HTTPResponse(status: 401) }
        let expected = WebhookSignature.sign(id: id, timestamp: seconds, body: request.body, secret: secret)
        // The header may carry several space-separated `v1,<base64>` signatures (key rotation).
        let valid = signatures.split(separator: " ").contains { ConstantTime.equals($0.utf8, expected.utf8) }
        guard valid else { return HTTPResponse(status: 401) }
        let body = String(decoding: request.body, as: UTF8.self)
        let type = (try? JSONParser.parse(request.body).object?["type"]?.string) ?? nil
        events.withLock { events in
            // At least once: a redelivery of an event already shown is not shown twice.
            guard !events.contains(where: { $0.id == id }) else { return }
            events.insert(Event(id: id, type: type ?? "?", receivedAt: clock(), body: body), at: 0)
            if events.count > Self.kept { events.removeLast(events.count - Self.kept) }
        }
        return HTTPResponse(status: 204)
    }

    func page() -> String {
        let rows = received.map { event in
            """
            <li><strong>\(HTMLText.escape(event.type))</strong> <span class="muted">\(HTMLText.escape(RFC3339.format(event.receivedAt))) · \(HTMLText.escape(event.id))</span>
            <pre>\(HTMLText.escape(event.body))</pre></li>
            """
        }.joined(separator: "\n")
        return Pages.document(
            title: "Webhooks — siwa-server demo",
            body: """
                <h1>Webhooks received</h1>
                <p class="lead">The demo sends its webhook events to itself, signed as your backend would receive them
                (Standard Webhooks), and checks each signature. Newest first; reload to see new ones.</p>
                <p><a href="/account">Your account</a> · <a href="/">Sign in</a></p>
                \(rows.isEmpty ? #"<p class="muted">None yet: sign in, or delete an account.</p>"# : "<ol class=\"events\">\n\(rows)\n</ol>")
                """,
            language: .english, here: nil)
    }
}
