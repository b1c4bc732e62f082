import Glibc

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

public struct HTTPServerConfiguration: Sendable {
    /// An IPv4 or IPv6 literal (`127.0.0.1`, `0.0.0.0`, `::`, `::1`) or `localhost`.
    public var host: String
    /// 0 asks the system for a free port; `HTTPServer.port` tells which.
    public var port: UInt16
    /// I/O loops, each a thread with its own epoll instance and listening socket.
    public var threads: Int
    /// Lower-priority threads for requests with large bodies (`limits.offloadBodyBytes`).
    public var backgroundThreads = BackgroundExecutor.defaultThreads()
    public var limits: HTTPLimits
    public var timeouts: HTTPTimeouts
    /// Peer addresses the per-client connection cap does not apply to: trusted proxies carry
    /// many clients on their connections.
    public var isExemptFromAddressCap: @Sendable (String) -> Bool = { _ in false }

    public init(
        host: String = "127.0.0.1", port: UInt16 = 8080, threads: Int = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
        limits: HTTPLimits = HTTPLimits(), timeouts: HTTPTimeouts = HTTPTimeouts()
    ) {
        self.host = host
        self.port = port
        self.threads = max(1, threads)
        self.limits = limits
        self.timeouts = timeouts
    }
}
