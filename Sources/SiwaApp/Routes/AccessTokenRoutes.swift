import HTTPServer
import JSON

/// `POST /api/token` and `GET /.well-known/jwks.json` (docs/guides/connecting-your-backend.md "Access tokens").
enum AccessTokenRoutes {
    static func register(on router: inout Router, authenticator: SessionAuthenticator, issuer: AccessTokenIssuer, keys: AccessTokenKeys) {
        router.add(.post, "/api/token") { request in
            // A POST like `/api/logout`: carried by the cookie, it must come from our own origin.
            let found = try await authenticator.authenticate(request, origin: .ours)
            let token = try issuer.issue(user: found.user, session: found.session, now: authenticator.clock())
            let body = JSONValue.object(JSONObject([
                ("access_token", .string(token)), ("token_type", .string("Bearer")), ("expires_in", .integer(issuer.ttl)),
            ]))
            return HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(body))
        }

        let cacheControl = "public, max-age=\(AccessTokenKeys.jwksMaxAge)"
        router.add(.get, "/.well-known/jwks.json") { _ in
            HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": cacheControl], body: keys.jwks)
        }
    }
}
