import Glibc

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
