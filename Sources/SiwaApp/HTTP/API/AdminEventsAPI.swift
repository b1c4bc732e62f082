import HTTPServer
import Store

/// `GET /admin/events` (docs/reference/http-api.md "Activity"): every user's events, newest
/// first, filtered by user, type prefix and time; behind the admin token.
struct AdminEventsAPI: Sendable {
    let audit: AuditLog

    func list(_ request: HTTPRequest) async throws -> HTTPResponse {
        let query: EventQuery
        do {
            query = try EventQuery(parsing: request.query, shape: .admin)
        } catch {
            throw APIError.invalidRequest(error.description)
        }
        let page = try await audit.page(query.filter, after: query.cursor, limit: query.limit)
        return ActivityAPI.json(EventJSON.page(page.events, next: page.next))
    }
}
