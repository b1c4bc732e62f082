import Accounts
import HTTPServer

/// `POST /apple/notifications` (docs/reference/http-api.md): Apple's server-to-server
/// notifications. The 200 is sent only after `NotificationProcessor` has the effect on disk.
struct NotificationsAPI: Sendable {
    let processor: NotificationProcessor

    func receive(_ request: HTTPRequest) async throws -> HTTPResponse {
        let outcome = try await processor.process(request.body, requestID: request.requestID)
        return .json(200, #"{"status":""# + outcome.rawValue + #""}"#)
    }
}
