import WireFormat

/// A handler may await slow work (a call to Apple); the server runs it without blocking its
/// I/O loop or other connections. What it throws, the responder's error renderer answers.
public typealias HTTPHandler = @Sendable (HTTPRequest) async throws -> HTTPResponse

/// A route's answer made at once, on the I/O loop's thread, without a task: for the hot reads
/// (`/healthz`, a session found in memory) whose work never waits. nil when this request needs
/// to wait for something after all (a session not in memory); its `HTTPHandler` then answers.
public typealias ImmediateHTTPHandler = @Sendable (HTTPRequest) throws -> HTTPResponse?

/// Maps method and path to a handler. Patterns are literal segments and `{name}` parameters,
/// written as in OpenAPI (`/api/sessions/{id}`), so the route table and `openapi.json` share
/// one vocabulary. A value built once at start and read by every loop.
public struct Router: Sendable {
    public struct Route: Sendable {
        public let method: HTTPMethod
        public let pattern: String
        let segments: [RouteSegment]
        let handler: HTTPHandler
        let immediate: ImmediateHTTPHandler?
    }

    public enum Match: Sendable {
        case found(Route, parameters: [String: String])
        /// The path exists with other methods; `allow` is the `Allow` header value.
        case methodNotAllowed(allow: String)
        case notFound
    }

    enum RouteSegment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// Routes without parameters, by exact path: the common case costs one hash lookup.
    private var literalRoutes: [String: [HTTPMethod: Route]] = [:]
    private var parameterRoutes: [Route] = []

    public init() {}

    public var routes: [Route] {
        literalRoutes.values.flatMap(\.values) + parameterRoutes
    }

    /// With `immediate`, a request is first offered to it (see `ImmediateHTTPHandler`).
    public mutating func add(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping HTTPHandler, immediate: ImmediateHTTPHandler? = nil) {
        precondition(pattern.hasPrefix("/"), "route patterns start with /")
        let segments = Self.split(pattern).map { segment -> RouteSegment in
            if segment.hasPrefix("{"), segment.hasSuffix("}") { return .parameter(String(segment.dropFirst().dropLast())) }
            return .literal(String(segment))
        }
        let route = Route(method: method, pattern: pattern, segments: segments, handler: handler, immediate: immediate)
        if segments.contains(where: { if case .parameter = $0 { true } else { false } }) {
            precondition(!parameterRoutes.contains { $0.method == method && $0.segments == segments }, "duplicate route \(method) \(pattern)")
            parameterRoutes.append(route)
        } else {
            precondition(literalRoutes[pattern]?[method] == nil, "duplicate route \(method) \(pattern)")
            literalRoutes[pattern, default: [:]][method] = route
        }
    }


    /// Finds the route for a request. HEAD falls back to GET (RFC 9110 §9.3.2).
    public func match(method: HTTPMethod, path: String) -> Match {
        if let byMethod = literalRoutes[path] {
            if let route = byMethod[method] ?? (method == .head ? byMethod[.get] : nil) {
                return .found(route, parameters: [:])
            }
            return .methodNotAllowed(allow: Self.allowValue(byMethod.keys))
        }
        guard !parameterRoutes.isEmpty else { return .notFound }
        let segments = Self.split(path)
        var allowed: Set<HTTPMethod> = []
        var fallback: (Route, [String: String])?
        for route in parameterRoutes {
            guard let parameters = Self.bind(route.segments, to: segments) else { continue }
            if route.method == method { return .found(route, parameters: parameters) }
            if method == .head, route.method == .get { fallback = (route, parameters) }
            allowed.insert(route.method)
        }
        if let (route, parameters) = fallback { return .found(route, parameters: parameters) }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allow: Self.allowValue(allowed))
    }

    private static func bind(_ pattern: [RouteSegment], to segments: [Substring]) -> [String: String]? {
        guard pattern.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(pattern, segments) {
            switch expected {
            case .literal(let literal):
                guard actual == literal else { return nil }
            case .parameter(let name):
                guard !actual.isEmpty, let value = PercentDecoding.decode(actual) else { return nil }
                parameters[name] = value
            }
        }
        return parameters
    }

    private static func split(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { $0 }
    }

    private static func allowValue(_ methods: some Sequence<HTTPMethod>) -> String {
        var names = Set(methods.map(\.rawValue))
        if names.contains("GET") { names.insert("HEAD") }
        return names.sorted().joined(separator: ", ")
    }
}
