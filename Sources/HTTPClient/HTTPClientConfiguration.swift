/// Limits and trust for calls to Apple (docs/reference/http-api.md: 3 s to connect, 10 s in all).
public struct HTTPClientConfiguration: Sendable {
    /// Bounds the TCP connect (all of a host's addresses together).
    public var connectTimeout: Duration = .seconds(3)
    /// Bounds the whole call: waiting for a worker, connect, TLS, sending and receiving.
    public var totalTimeout: Duration = .seconds(10)
    /// The largest body accepted, counted on the wire and again after inflating gzip.
    public var maxResponseBytes: Int = 1 << 20
    /// A PEM file of CA certificates trusted as well as the system's (`apple_ca_file`).
    public var extraCAFile: String?
    /// PEM text of CA certificates trusted as well as the system's.
    public var extraCAPEM: String?
    /// Trust only the extra CAs, not the system store (tests).
    public var trustOnlyExtraCAs = false
    /// Idle keep-alive connections kept per scheme, host and port.
    public var maxIdleConnectionsPerHost = 8
    /// An idle connection older than this is closed rather than reused.
    public var idleTimeout: Duration = .seconds(30)
    /// Threads that do the blocking work; also the number of calls in flight at once.
    public var workerThreads = 32

    public init(
        connectTimeout: Duration = .seconds(3), totalTimeout: Duration = .seconds(10), maxResponseBytes: Int = 1 << 20,
        extraCAFile: String? = nil, extraCAPEM: String? = nil, trustOnlyExtraCAs: Bool = false,
        maxIdleConnectionsPerHost: Int = 8, idleTimeout: Duration = .seconds(30), workerThreads: Int = 32
    ) {
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.maxResponseBytes = maxResponseBytes
        self.extraCAFile = extraCAFile
        self.extraCAPEM = extraCAPEM
        self.trustOnlyExtraCAs = trustOnlyExtraCAs
        self.maxIdleConnectionsPerHost = maxIdleConnectionsPerHost
        self.idleTimeout = idleTimeout
        self.workerThreads = workerThreads
    }
}
