/// Timeouts that keep slow or stalled clients from holding a connection (docs/reference/http-api.md).
public struct HTTPTimeouts: Sendable, Equatable {
    /// From the start of a request (or the connection) to the end of its head.
    public var header: Duration = .seconds(10)
    /// Longest gap without a byte while a body is arriving.
    public var bodyProgress: Duration = .seconds(10)
    /// How long a body may arrive at any pace before `HTTPLimits.minBodyBytesPerSecond` applies.
    public var bodyGrace: Duration = .seconds(10)
    /// An open connection with no request started.
    public var idle: Duration = .seconds(60)
    /// Longest gap without the client taking response bytes.
    public var writeProgress: Duration = .seconds(10)
    /// How long a graceful stop waits for requests in flight.
    public var drain: Duration = .seconds(10)
    /// After an error response, how long unread input is drained before closing, so the
    /// client reads the response rather than a reset.
    public var linger: Duration = .seconds(2)

    public init() {}
}
