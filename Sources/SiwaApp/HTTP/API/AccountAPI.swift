import Accounts
import HTTPServer
import JSON
import Store

/// The session and account routes of docs/reference/http-api.md "Sessions and account", and the nonce route.
struct AccountAPI: Sendable {
    let sessions: SessionStore
    let replay: ReplayGuard
    let accounts: Store
    let deletion: AccountDeletion
    /// Sessions unused this long are not listed (they no longer authenticate).
    let idleTTL: Int64
    let clock: @Sendable () -> Int64
    /// `trusted_proxies`, for the audit events' client address.
    var trustedProxies = CIDRSet()

    /// The audit context of a change the signed-in person makes through `request`.
    private func audit(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) -> AuditContext {
        AuditContext(request, trusted: trustedProxies, sessionID: found.session.id)
    }

    func issueNonce(_: HTTPRequest) async throws -> HTTPResponse {
        let nonce = try await replay.issueNonce(now: clock())
        let body = JSONValue.object(JSONObject([
            ("nonce", .string(nonce.value)), ("expires_at", .string(RFC3339.format(nonce.expiresAt))),
        ]))
        return HTTPResponse(status: 201, headers: ["Content-Type": "application/json"], body: JSONWriter.bytes(body))
    }

    /// The body is written once per cached session object (`LiveSession.userJSON`), always
    /// by `UserJSON.bytes`: the one writer that memo may be given.
    static func me(_: HTTPRequest, _ found: SessionAuthenticator.Authenticated) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: found.live.userJSON(UserJSON.bytes))
    }

    /// docs/guides/passwords-and-email.md: the language of the user's mail.
    func update(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        let patch: AccountPatch
        do {
            patch = try AccountPatch(parsing: request.body)
        } catch {
            throw APIError.invalidRequest("\(error)")
        }
        guard let user = try await accounts.setLocale(
            userID: found.user.id, locale: patch.locale.rawValue, now: clock(), audit: audit(request, found))
        else {
            throw APIError.userNotFound
        }
        return HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(UserJSON.value(user)))
    }

    /// A failed deletion is one transaction rolled back: nothing changed (503 when the database
    /// is unavailable).
    func delete(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        // nil: deleted meanwhile by another request; gone all the same.
        let revocation = try await deletion.delete(userID: found.user.id, audit: audit(request, found)) ?? "none"
        return Self.deleted(revocation: revocation)
    }

    /// The 202 of `DELETE /api/account` and `DELETE /admin/users/{id}`.
    static func deleted(revocation: String) -> HTTPResponse {
        let body = JSONValue.object(JSONObject([("status", .string("deleted")), ("apple_revocation", .string(revocation))]))
        return HTTPResponse(status: 202, headers: ["Content-Type": "application/json"], body: JSONWriter.bytes(body))
    }

    func logout(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        _ = try await sessions.end(id: found.session.id, userID: found.user.id, reason: .logout, now: clock(), audit: audit(request, found))
        return HTTPResponse(status: 204)
    }

    func listSessions(_: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        let list = try await sessions.list(userID: found.user.id, now: clock(), idleTTL: idleTTL)
        let items = list.map { SessionJSON.value($0, current: $0.id == found.session.id) }
        let body = JSONValue.object(JSONObject([("sessions", .array(items))]))
        return HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(body))
    }

    func endSession(_ request: HTTPRequest, _ found: SessionAuthenticator.Authenticated) async throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        // Another user's session, or one already ended, is simply not found.
        guard try await sessions.end(
            id: id, userID: found.user.id, reason: id == found.session.id ? .logout : .endedByUser, now: clock(), audit: audit(request, found))
        else { throw APIError.sessionNotFound }
        return HTTPResponse(status: 204)
    }
}
