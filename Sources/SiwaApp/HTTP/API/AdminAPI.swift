import Accounts
import HTTPServer
import JSON
import Store

/// The admin API of docs/guides/connecting-your-backend.md: the team's operators find users, see their sessions, set their
/// `external_id`, end their sessions and delete them. Registered only with `admin_token` set;
/// every route is behind `AdminAuthenticator` (the route table's admin guard).
struct AdminAPI: Sendable {
    let store: Store
    let deletion: AccountDeletion
    /// Sessions unused this long are not listed (they no longer authenticate).
    let idleTTL: Int64
    let clock: @Sendable () -> Int64
    /// `trusted_proxies`, for the audit events' client address.
    var trustedProxies = CIDRSet()

    /// `GET /admin/users`: one page, and the cursor of the next when there is one (a user more
    /// than the page is read to know).
    func listUsers(_ request: HTTPRequest) async throws -> HTTPResponse {
        let query: UserListQuery
        do {
            query = try UserListQuery(parsing: request.query)
        } catch {
            throw APIError.invalidRequest(error.description)
        }
        let found = try await store.users.list(matching: query.filter, after: query.afterID, limit: query.limit + 1)
        let page = found.prefix(query.limit)
        let next = found.count > query.limit ? page.last.map { UserListQuery.cursor(after: $0.id) } : nil
        return Self.json(.object(JSONObject([
            ("users", .array(page.map(UserJSON.value))),
            ("next_cursor", next.map(JSONValue.string) ?? .null),
        ])))
    }

    /// `GET /admin/users/{id}`: USER and the sessions that still authenticate, newest first.
    func showUser(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        guard let user = try await store.users.user(id: id) else { throw APIError.userNotFound }
        let sessions = try await store.sessions.list(userID: id, now: clock(), idleTTL: idleTTL)
        return Self.json(Self.userWithSessions(user, sessions))
    }

    /// `PATCH /admin/users/{id}`: sets or clears `external_id` (`user.updated` when it changed).
    func setExternalID(_ request: HTTPRequest) async throws -> HTTPResponse {
        let patch: ExternalIDPatch
        do {
            patch = try ExternalIDPatch(parsing: request.body)
        } catch {
            throw APIError.invalidRequest(error.description)
        }
        // `ExternalIDTaken` (409) is answered by `ErrorResponses`.
        guard let user = try await store.setExternalID(
            userID: request.pathParameters["id"] ?? "", externalID: patch.externalID, now: clock(), audit: audit(request))
        else { throw APIError.userNotFound }
        return Self.json(UserJSON.value(user))
    }

    /// `DELETE /admin/users/{id}`: as `DELETE /api/account`, with `user.deleted`'s reason `admin`.
    func deleteUser(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let revocation = try await deletion.delete(userID: request.pathParameters["id"] ?? "", reason: .admin, audit: audit(request)) else {
            throw APIError.userNotFound
        }
        return AccountAPI.deleted(revocation: revocation)
    }

    /// `DELETE /admin/users/{id}/sessions`: every session of the user ends at once.
    func endSessions(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard try await store.endSessions(userID: request.pathParameters["id"] ?? "", now: clock(), audit: audit(request)) != nil else {
            throw APIError.userNotFound
        }
        return HTTPResponse(status: 204)
    }

    /// USER with `"sessions"` (as `/api/sessions` lists them, without `current`).
    static func userWithSessions(_ user: UserRecord, _ sessions: [SessionRecord]) -> JSONValue {
        var object = UserJSON.object(user)
        object["sessions"] = .array(sessions.map { SessionJSON.value($0) })
        return .object(object)
    }

    /// An operator's action through `request`: actor `admin`, with the client's address.
    private func audit(_ request: HTTPRequest) -> AuditContext {
        AuditContext(request, trusted: trustedProxies, actor: .admin)
    }

    /// Users' personal data: never kept by a cache on the way.
    private static func json(_ value: JSONValue) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(value))
    }
}
