/// A complete request as handlers see it.
public struct HTTPRequest: Sendable {
    public var head: HTTPRequestHead
    public var body: [UInt8]
    /// Values of `{name}` segments of the matched route, percent-decoded.
    public var pathParameters: [String: String]
    /// The request's id: the client's `X-Request-Id` when it is well formed, else a new one.
    public var requestID: String
    /// The peer's address as `ip` (no port), for logs and rate limits.
    public var remoteAddress: String

    public init(
        head: HTTPRequestHead, body: [UInt8] = [], pathParameters: [String: String] = [:],
        requestID: String = "", remoteAddress: String = ""
    ) {
        self.head = head
        self.body = body
        self.pathParameters = pathParameters
        self.requestID = requestID
        self.remoteAddress = remoteAddress
    }

    /// A request made in process, as the parser would have read it off the wire: for
    /// handing a responder a request without a socket.
    public init(
        _ method: HTTPMethod, _ target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        requestID: String = RequestID.make(), remoteAddress: String = "127.0.0.1"
    ) {
        let query = target.firstIndex(of: "?")
        let head = HTTPRequestHead(
            method: method, target: target, path: query.map { String(target[..<$0]) } ?? target,
            query: query.map { String(target[target.index(after: $0)...]) }, version: .http1_1, headers: headers,
            keepAlive: true, expectsContinue: false, framing: body.isEmpty ? .none : .length(body.count))
        self.init(head: head, body: body, requestID: requestID, remoteAddress: remoteAddress)
    }

    public var method: HTTPMethod { head.method }
    public var path: String { head.path }
    public var query: String? { head.query }
    public var headers: HTTPHeaders { head.headers }
}
