/// How the body of a request is delimited (RFC 9112 §6).
public enum BodyFraming: Sendable, Equatable {
    case none
    case length(Int)
    case chunked
}

/// The request line and header fields of one request, checked and interpreted.
public struct HTTPRequestHead: Sendable {
    public var method: HTTPMethod
    /// The request target as received (origin form), e.g. `/auth/apple/login?return_to=%2F`.
    public var target: String
    /// The target up to `?`, still percent-encoded.
    public var path: String
    /// The target after `?`, or nil.
    public var query: String?
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// Whether the client allows the connection to stay open after this request.
    public var keepAlive: Bool
    /// `Expect: 100-continue` on HTTP/1.1: the client waits for an interim response.
    public var expectsContinue: Bool
    public var framing: BodyFraming
}
