/// A refusal a handler decided on, answered in docs/reference/http-api.md's error shape.
struct APIError: Error, Sendable {
    let status: Int
    let code: String
    let description: String
    var headers: [(String, String)] = []

    static func invalidRequest(_ description: String) -> APIError {
        APIError(status: 400, code: "invalid_request", description: description)
    }

    static let sessionNotFound = APIError(status: 404, code: "not_found", description: "no such session")
    static let userNotFound = APIError(status: 404, code: "not_found", description: "no such user")

    /// The admin API without its token (docs/guides/connecting-your-backend.md); the challenge names the scheme (RFC 6750 §3).
    static let adminUnauthenticated = APIError(
        status: 401, code: "unauthenticated", description: "the admin API needs Authorization: Bearer <admin_token>",
        headers: [("WWW-Authenticate", "Bearer")])

    static func tooManyRequests(retryAfter seconds: Int) -> APIError {
        APIError(
            status: 429, code: "too_many_requests", description: "too many requests from this address; retry after \(seconds) s",
            headers: [("Retry-After", String(seconds))])
    }
}
