import HTTPServer
import JSON
import Store

/// The session and account routes of docs/reference/http-api.md "Sessions and account", and the nonce route.
enum AccountRoutes {
    /// - Parameter limited: wraps the routes that write for clients not signed in (`rate_limit`).
    static func register(
        on router: inout Router, authenticator: SessionAuthenticator, sessions: SessionStore, replay: ReplayGuard, accounts: Store,
        limited: (@escaping HTTPHandler) -> HTTPHandler
    ) {
        router.add(.post, "/api/auth/apple/nonce", limited { _ in
            let nonce = try await replay.issueNonce(now: authenticator.clock())
            let body = JSONValue.object(JSONObject([
                ("nonce", .string(nonce.value)), ("expires_at", .string(RFC3339.format(nonce.expiresAt))),
            ]))
            return HTTPResponse(status: 201, headers: ["Content-Type": "application/json"], body: JSONWriter.bytes(body))
        })

        router.add(.get, "/api/me") { request in
            let found = try await authenticator.authenticate(request, origin: .notChecked)
            return HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(UserJSON.value(found.user)))
        }

        // docs/guides/passwords-and-email.md: the language of the user's mail.
        router.add(.patch, "/api/account") { request in
            let found = try await authenticator.authenticate(request, origin: .ours)
            let patch: AccountPatch
            do {
                patch = try AccountPatch(parsing: request.body)
            } catch {
                throw APIError.invalidRequest("\(error)")
            }
            guard let user = try await accounts.setLocale(
                userID: found.user.id, locale: patch.locale.rawValue, now: authenticator.clock(), audit: authenticator.audit(request, found))
            else {
                throw APIError.userNotFound
            }
            return HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(UserJSON.value(user)))
        }

        router.add(.post, "/api/logout") { request in
            let found = try await authenticator.authenticate(request, origin: .ours)
            _ = try await sessions.end(
                id: found.session.id, userID: found.user.id, reason: .logout, now: authenticator.clock(), audit: authenticator.audit(request, found))
            return HTTPResponse(status: 204)
        }

        router.add(.get, "/api/sessions") { request in
            let found = try await authenticator.authenticate(request, origin: .notChecked)
            let list = try await sessions.list(userID: found.user.id, now: authenticator.clock(), idleTTL: authenticator.idleTTL)
            let items = list.map { SessionJSON.value($0, current: $0.id == found.session.id) }
            let body = JSONValue.object(JSONObject([("sessions", .array(items))]))
            return HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(body))
        }

        router.add(.delete, "/api/sessions/{id}") { request in
            let found = try await authenticator.authenticate(request, origin: .ours)
            let id = request.pathParameters["id"] ?? ""
            // Another user's session, or one already ended, is simply not found.
            guard try await sessions.end(
                id: id, userID: found.user.id, reason: id == found.session.id ? .logout : .endedByUser, now: authenticator.clock(),
                audit: authenticator.audit(request, found))
            else { throw APIError.sessionNotFound }
            return HTTPResponse(status: 204)
        }
    }
}
