import HTTPClient
import JSON

/// Delivers server-to-server notifications the way Apple does (APPLE.md §7): a POST of
/// `{"payload":"<JWS>"}` as `application/json`, with no authentication header. The receiver's
/// status is reported, not judged: tests check how their server answers.
struct NotificationSender: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        let jti: String?
    }

    let context: SimulatorContext
    let client: HTTPClient

    func send(_ event: NotificationEvent, to url: String) async throws -> (status: Int, jti: String) {
        let (payload, jti) = try context.signNotification(event)
        context.recordForwardingChange(event)
        let request = HTTPClientRequest(
            method: "POST", url: url, headers: [("Content-Type", "application/json")],
            body: JSONWriter.bytes(.object(JSONObject([("payload", .string(payload))]))))
        do {
            let response = try await client.send(request, idempotent: false)
            return (response.status, jti)
        } catch {
            throw Failure(description: "delivery to \(url) failed: \(error)", jti: jti)
        }
    }
}
