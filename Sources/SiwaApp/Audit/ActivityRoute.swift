import HTTPServer
import JSON
import Store

/// `GET /api/account/activity` (docs/reference/http-api.md "Activity"): the signed-in person's
/// own events, newest first. Nobody reads another's: the user is the session's, never a parameter.
struct ActivityRoute: Sendable {
    let audit: AuditLog
    let authenticator: SessionAuthenticator

    func register(on router: inout Router) {
        router.add(.get, "/api/account/activity") { request in try await handle(request) }
    }

    func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        let found = try await authenticator.authenticate(request, origin: .notChecked)
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
