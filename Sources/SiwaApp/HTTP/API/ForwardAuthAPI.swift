import HTTPServer
import Store

/// `GET /auth/verify` (HEAD too, by the router's fallback), docs/guides/connecting-your-backend.md: for reverse proxies'
/// forward authentication (nginx `auth_request`, Traefik `ForwardAuth`) and services that call
/// back. The session is read exactly as `/api/me` reads it, from the session cache, and the
/// answer has no body: this runs before every proxied request, so it costs about a `/healthz`.
/// It never calls Apple.
enum ForwardAuthAPI {
    /// Reads only: the proxy forwards the original request's headers, whose Origin is the
    /// team's site, so the route's guard checks no origin (a proxied change is the team API's
    /// to guard).
    static func verify(_: HTTPRequest, _ found: SessionAuthenticator.Authenticated) -> HTTPResponse {
        HTTPResponse(status: 204, headers: headers(found))
    }

    static func headers(_ found: SessionAuthenticator.Authenticated) -> HTTPHeaders {
        var headers = HTTPHeaders(capacity: 5)
        headers.add("X-Siwa-User-Id", found.user.id)
        headers.add("X-Siwa-Session-Id", found.session.id)
        // A user without an Apple ID (a password account, docs/guides/passwords-and-email.md) has no such header.
        if let appleSub = found.user.appleSub { headers.add("X-Siwa-Apple-Sub", appleSub) }
        if let externalID = found.user.externalID { headers.add("X-Siwa-External-Id", externalID) }
        headers.add("Cache-Control", "no-store")
        return headers
    }
}
