/// Turns a request into a response. The connection only moves bytes and enforces limits; what a
/// request means, how a failure looks and what is recorded of it belong to the responder.
public protocol HTTPResponder: Sendable {
    /// Never fails: by the time it returns, every error has become a response.
    func respond(to request: HTTPRequest) async -> HTTPResponse
    /// The response when it can be made at once on the loop's thread, without waiting for
    /// anything; nil to have `respond(to:)` make it in a task. Saves the task for the requests
    /// that are most of the traffic and cost least.
    func respondImmediately(to request: HTTPRequest) -> HTTPResponse?
    /// The answer to a request the connection refused before it was whole (malformed, too
    /// large, too slow, server busy). `requestID` is the one the response will carry.
    func response(for refusal: HTTPRefusal, requestID: String) -> HTTPResponse
    /// One record per response, on the loop thread that sent it: keep it quick.
    func responseSent(_ record: AccessRecord)
}

extension HTTPResponder {
    public func respondImmediately(to request: HTTPRequest) -> HTTPResponse? { nil }
}

/// A request the server turned away on its own, before any handler: the transport's refusals
/// and the router's (no such path, wrong method). The responder decides what the body says.
public struct HTTPRefusal: Error, Sendable {
    public let status: Int
    /// A stable machine-readable word (`payload_too_large`, `not_found`, …).
    public let code: String
    /// For people: says what was wrong without echoing the client's bytes.
    public let reason: String
    /// Headers the refusal needs whatever its body (`Allow` on a 405).
    public let headers: HTTPHeaders

    public init(status: Int, code: String, reason: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.code = code
        self.reason = reason
        self.headers = headers
    }

    public init(_ error: HTTPParseError) {
        let code =
            switch error.kind {
            case .badRequest: "bad_request"
            case .uriTooLong: "uri_too_long"
            case .headersTooLarge: "headers_too_large"
            case .payloadTooLarge: "payload_too_large"
            }
        self.init(status: error.status, code: code, reason: error.reason)
    }

    public static let notFound = HTTPRefusal(status: 404, code: "not_found", reason: "no such resource")

    public static func methodNotAllowed(_ method: HTTPMethod, allow: String) -> HTTPRefusal {
        HTTPRefusal(status: 405, code: "method_not_allowed", reason: "\(method) is not allowed here", headers: ["Allow": allow])
    }

    public static func requestTimeout(_ reason: String) -> HTTPRefusal {
        HTTPRefusal(status: 408, code: "request_timeout", reason: reason)
    }

    public static let busy = HTTPRefusal(
        status: 503, code: "busy", reason: "the server is holding too many request bodies; try again shortly")

    /// A plain-text rendering, for servers that bring no error shape of their own.
    public var plainTextResponse: HTTPResponse {
        var response = HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: "\(code): \(reason)\n")
        for (name, value) in headers { response.headers.add(name, value) }
        return response
    }
}
