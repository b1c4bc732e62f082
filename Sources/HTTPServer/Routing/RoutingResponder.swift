/// The usual responder: a `Router` finds the handler, an error renderer turns whatever the
/// handler throws (and the server's own refusals) into a response, and an observer hears of
/// every response sent. With a `CrossOriginPolicy`, requests from its origins get CORS.
public struct RoutingResponder: HTTPResponder {
    /// Renders an error: a handler's (with its request) or an `HTTPRefusal` (the request is
    /// nil when the connection refused it before it was whole).
    public typealias ErrorRenderer = @Sendable (_ error: any Error, _ request: HTTPRequest?) -> HTTPResponse

    public let router: Router
    private let renderError: ErrorRenderer
    private let observer: (any HTTPServerObserver)?
    private let crossOrigin: CrossOriginPolicy?

    public init(
        router: Router, observer: (any HTTPServerObserver)? = nil, crossOrigin: CrossOriginPolicy? = nil,
        renderError: @escaping ErrorRenderer = Self.plainText
    ) {
        self.router = router
        self.observer = observer
        self.crossOrigin = crossOrigin
        self.renderError = renderError
    }

    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        // Without a policy (or without a listed Origin) a request costs no more than routing.
        guard let crossOrigin, let origin = crossOrigin.allowedOrigin(of: request) else { return await route(request) }
        if request.method == .options { return crossOrigin.preflight(for: origin) }
        var response = await route(request)
        crossOrigin.allow(origin, on: &response)
        return response
    }

    public func respondImmediately(to request: HTTPRequest) -> HTTPResponse? {
        guard let crossOrigin, let origin = crossOrigin.allowedOrigin(of: request) else { return routeImmediately(request) }
        if request.method == .options { return crossOrigin.preflight(for: origin) }
        guard var response = routeImmediately(request) else { return nil }
        crossOrigin.allow(origin, on: &response)
        return response
    }

    /// As `route`, for a route with an immediate handler that answers; nil otherwise (routing
    /// again in `route` then costs a hash lookup).
    private func routeImmediately(_ request: HTTPRequest) -> HTTPResponse? {
        guard case .found(let route, let parameters) = router.match(method: request.method, path: request.path),
              let immediate = route.immediate
        else { return nil }
        var request = request
        request.pathParameters = parameters
        var response: HTTPResponse
        do {
            guard let answered = try immediate(request) else { return nil }
            response = answered
        } catch {
            response = renderError(error, request)
        }
        response.route = route.pattern
        return response
    }

    private func route(_ request: HTTPRequest) async -> HTTPResponse {
        switch router.match(method: request.method, path: request.path) {
        case .found(let route, let parameters):
            var request = request
            request.pathParameters = parameters
            var response: HTTPResponse
            do {
                response = try await route.handler(request)
            } catch {
                response = renderError(error, request)
            }
            response.route = route.pattern
            return response
        case .methodNotAllowed(let allow):
            return renderError(HTTPRefusal.methodNotAllowed(request.method, allow: allow), request)
        case .notFound:
            return renderError(HTTPRefusal.notFound, request)
        }
    }

    public func response(for refusal: HTTPRefusal, requestID: String) -> HTTPResponse {
        renderError(refusal, nil)
    }

    public func responseSent(_ record: AccessRecord) {
        observer?.requestCompleted(record)
    }

    /// Refusals as plain text; any other error is a bare 500, since this module cannot know
    /// what the error means.
    public static let plainText: ErrorRenderer = { error, _ in
        (error as? HTTPRefusal)?.plainTextResponse
            ?? HTTPResponse(status: 500, contentType: "text/plain; charset=utf-8", body: "internal_error\n")
    }
}
