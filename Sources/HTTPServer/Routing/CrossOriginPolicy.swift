/// Cross-origin resource sharing (the Fetch standard's CORS protocol) for browsers on a fixed list
/// of origins: a preflight `OPTIONS` is answered before routing, and every other response carries
/// the headers that let the page read it. A request whose `Origin` is not listed, or whose path
/// is out of scope, is left exactly as it was: no `Access-Control-*` header at all.
public struct CrossOriginPolicy: Sendable {
    /// Serialized origins (`https://app.example.com`, `http://localhost:3000`), compared with the
    /// `Origin` header as plain strings: browsers send the serialized form.
    public let origins: Set<String>
    private let allowMethods: String
    private let allowHeaders: String
    private let exposeHeaders: String
    private let maxAge: String
    private let isInScope: @Sendable (_ path: String) -> Bool

    /// - Parameter isInScope: whether a path takes part; called only for requests from a
    ///   listed origin.
    public init(
        origins: some Sequence<String>, allowMethods: String, allowHeaders: String, exposeHeaders: String, maxAgeSeconds: Int,
        isInScope: @escaping @Sendable (_ path: String) -> Bool
    ) {
        self.origins = Set(origins)
        self.allowMethods = allowMethods
        self.allowHeaders = allowHeaders
        self.exposeHeaders = exposeHeaders
        maxAge = String(maxAgeSeconds)
        self.isInScope = isInScope
    }

    /// The request's `Origin` when it is listed and the path is in scope, else nil.
    public func allowedOrigin(of request: HTTPRequest) -> String? {
        guard let origin = request.headers["Origin"], origins.contains(origin), isInScope(request.path) else { return nil }
        return origin
    }

    /// 204 with what the browser asks before a request that is not "simple" (a bearer token, a
    /// JSON body, DELETE).
    public func preflight(for origin: String) -> HTTPResponse {
        var headers = HTTPHeaders(capacity: 6)
        headers.add("Access-Control-Allow-Origin", origin)
        headers.add("Access-Control-Allow-Credentials", "true")
        headers.add("Access-Control-Allow-Methods", allowMethods)
        headers.add("Access-Control-Allow-Headers", allowHeaders)
        headers.add("Access-Control-Max-Age", maxAge)
        headers.add("Vary", "Origin")
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Lets the page read `response`, whatever its status. `Vary: Origin` keeps a shared cache
    /// from handing one origin's answer to another.
    public func allow(_ origin: String, on response: inout HTTPResponse) {
        response.headers.add("Access-Control-Allow-Origin", origin)
        response.headers.add("Access-Control-Allow-Credentials", "true")
        response.headers.add("Access-Control-Expose-Headers", exposeHeaders)
        response.headers.add("Vary", "Origin")
    }
}
