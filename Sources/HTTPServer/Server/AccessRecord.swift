/// What the server tells its observer about each response: enough for an access-log line and
/// the request metrics, and never a header value or body (they may hold secrets).
public struct AccessRecord: Sendable {
    public var method: String
    /// The path without the query string (queries may carry codes or tokens).
    public var path: String
    /// The matched route pattern, e.g. `/api/sessions/{id}`; nil when no route matched.
    public var route: String?
    public var status: Int
    public var requestBytes: Int
    public var responseBytes: Int
    public var durationSeconds: Double
    public var requestID: String
    /// The peer's address, as the socket says.
    public var remoteAddress: String
    /// The `X-Forwarded-For` value as received, for the application to believe or not
    /// (it knows which proxies are trusted).
    public var forwardedFor: String?

    /// A record of a request not yet answered; the connection fills in the rest.
    public init(method: String, path: String, requestBytes: Int, requestID: String, remoteAddress: String, forwardedFor: String?) {
        self.method = method
        self.path = path
        self.route = nil
        self.status = 0
        self.requestBytes = requestBytes
        self.responseBytes = 0
        self.durationSeconds = 0
        self.requestID = requestID
        self.remoteAddress = remoteAddress
        self.forwardedFor = forwardedFor
    }
}

/// Receives one record per response, on the I/O loop that served it: keep it quick.
public protocol HTTPServerObserver: Sendable {
    func requestCompleted(_ record: AccessRecord)
}
