import HTTPServer

/// One line of the route table (`Routes`): a method, a path, who may call it, and the handler
/// that answers. The guard runs before the handler; a session route's handler gets the session
/// the guard found.
struct Route: Sendable {
    /// Who may call a route, checked before its handler runs.
    enum Guard: Sendable, Equatable {
        /// Anyone.
        case open
        /// Anyone, within `rate_limit` per client: the routes that write for clients not signed in.
        case rateLimited
        /// A live session, by bearer token or cookie; a cookie must also show where the request
        /// came from (`OriginCheck`).
        case session(SessionAuthenticator.OriginCheck)
        /// `Authorization: Bearer <admin_token>`.
        case admin
        /// A page people reach in a browser: whatever its handler throws is shown as a page.
        case page
        /// A page within `rate_limit`.
        case rateLimitedPage
        /// The operators' console: its handlers check the console session, CSRF token and
        /// `Origin` themselves and answer with the console's own pages; its sign-in is within
        /// `rate_limit`.
        case console(rateLimited: Bool)
    }

    typealias SessionHandler = @Sendable (HTTPRequest, SessionAuthenticator.Authenticated) async throws -> HTTPResponse

    enum Handler: Sendable {
        case request(HTTPHandler)
        case session(SessionHandler)
    }

    /// A handler that never waits, for the hot reads: the router offers it each request first,
    /// on the I/O loop's thread, and uses `handler` only when the guard itself would wait (a
    /// session not in memory). See `ImmediateHTTPHandler`.
    enum Immediate: Sendable {
        case request(@Sendable (HTTPRequest) throws -> HTTPResponse)
        case session(@Sendable (HTTPRequest, SessionAuthenticator.Authenticated) throws -> HTTPResponse)
    }

    let method: HTTPMethod
    let path: String
    let access: Guard
    let handler: Handler
    var immediate: Immediate?

    static func open(_ method: HTTPMethod, _ path: String, _ handler: @escaping HTTPHandler) -> Route {
        Route(method: method, path: path, access: .open, handler: .request(handler))
    }

    /// An open route whose handler never waits.
    static func open(_ method: HTTPMethod, _ path: String, immediate handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) -> Route {
        Route(method: method, path: path, access: .open, handler: .request({ try handler($0) }), immediate: .request(handler))
    }

    static func rateLimited(_ method: HTTPMethod, _ path: String, _ handler: @escaping HTTPHandler) -> Route {
        Route(method: method, path: path, access: .rateLimited, handler: .request(handler))
    }

    static func session(
        _ method: HTTPMethod, _ path: String, origin: SessionAuthenticator.OriginCheck, _ handler: @escaping SessionHandler
    ) -> Route {
        Route(method: method, path: path, access: .session(origin), handler: .session(handler))
    }

    /// A session route whose handler never waits: with the session in memory, the whole request
    /// is answered at once.
    static func session(
        _ method: HTTPMethod, _ path: String, origin: SessionAuthenticator.OriginCheck,
        immediate handler: @escaping @Sendable (HTTPRequest, SessionAuthenticator.Authenticated) throws -> HTTPResponse
    ) -> Route {
        Route(method: method, path: path, access: .session(origin), handler: .session({ try handler($0, $1) }), immediate: .session(handler))
    }

    static func admin(_ method: HTTPMethod, _ path: String, _ handler: @escaping HTTPHandler) -> Route {
        Route(method: method, path: path, access: .admin, handler: .request(handler))
    }

    static func page(_ method: HTTPMethod, _ path: String, _ handler: @escaping HTTPHandler) -> Route {
        Route(method: method, path: path, access: .page, handler: .request(handler))
    }

    static func console(_ method: HTTPMethod, _ path: String, rateLimited: Bool = false, _ handler: @escaping HTTPHandler) -> Route {
        Route(method: method, path: path, access: .console(rateLimited: rateLimited), handler: .request(handler))
    }

    static func rateLimitedPage(_ method: HTTPMethod, _ path: String, _ handler: @escaping HTTPHandler) -> Route {
        Route(method: method, path: path, access: .rateLimitedPage, handler: .request(handler))
    }
}
