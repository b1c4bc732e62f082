import Accounts
import HTTPServer
import JSON

/// `POST /api/token` and `GET /.well-known/jwks.json` (docs/guides/connecting-your-backend.md "Access tokens").
struct AccessTokenAPI: Sendable {
    let issuer: AccessTokenIssuer
    let keys: AccessTokenKeys
    let clock: @Sendable () -> Int64

    /// A POST like `/api/logout`: carried by the cookie, it must come from our own origin (the
    /// route's guard).
    func issue(_: HTTPRequest, _ found: SessionAuthenticator.Authenticated) throws -> HTTPResponse {
        let token = try issuer.issue(user: found.user, session: found.session, now: clock())
        let body = JSONValue.object(JSONObject([
            ("access_token", .string(token)), ("token_type", .string("Bearer")), ("expires_in", .integer(issuer.ttl)),
        ]))
        return HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(body))
    }

    private static let cacheControl = "public, max-age=\(AccessTokenKeys.jwksMaxAge)"

    func keySet(_: HTTPRequest) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": Self.cacheControl], body: keys.jwks)
    }
}
