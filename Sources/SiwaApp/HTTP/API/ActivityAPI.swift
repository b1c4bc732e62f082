import Accounts
import HTTPServer
import JSON
import Store

/// `GET /api/account/activity` (docs/reference/http-api.md "Activity"): the signed-in person's
/// own events, newest first. Nobody reads another's: the user is the session's, never a parameter.
struct ActivityAPI: Sendable {
    let audit: AuditLog

    func list(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        let query: EventQuery
        do {
            query = try EventQuery(parsing: request.query, shape: .activity)
        } catch {
            throw APIError.invalidRequest(error.description)
        }
        var filter = query.filter
        filter.userID = found.user.id
        let page = try await audit.page(filter, after: query.cursor, limit: query.limit)
        return Self.json(EventJSON.page(page.events, next: page.next))
    }

    /// Personal data: never kept by a cache on the way.
    static func json(_ value: JSONValue) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(value))
    }
}
