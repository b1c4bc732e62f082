/// A response as handlers build it. The server adds `Date`, `Content-Length`, `Connection`,
/// `X-Request-Id` and, where it applies, gzip and `Vary`.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The route pattern that produced it, set by `RoutingResponder` for the access record.
    var route: String?

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public init(status: Int = 200, contentType: String, body: some StringProtocol) {
        self.init(status: status, headers: ["Content-Type": contentType], body: Array(body.utf8))
    }

    /// A JSON body that is already encoded.
    public static func json(_ status: Int = 200, _ body: some StringProtocol) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: body)
    }
}
