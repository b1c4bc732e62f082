/// Size limits enforced while parsing, so that a hostile client cannot make the server buffer
/// without bound. Defaults follow docs/reference/http-api.md.
public struct HTTPLimits: Sendable, Equatable {
    /// The request line and all header lines together (docs/reference/http-api.md: 16 KiB → 431).
    public var maxHeaderBytes = 16 * 1024
    /// Header fields per request, and trailer fields per chunked body (docs/reference/http-api.md: 100 → 431).
    public var maxHeaderFields = 100
    /// The request line alone; longer is 414.
    public var maxRequestLineBytes = 8 * 1024
    /// The decoded body; larger is 413.
    public var maxBodyBytes = 1_048_576
    /// One chunk-size line with its extensions.
    public var maxChunkLineBytes = 4 * 1024
    /// Open connections in all; more are closed as soon as they are accepted (docs/reference/http-api.md).
    public var maxConnections = 10_000
    /// Open connections from one client (`ClientKey`: an IPv4 address, an IPv6 /64); more are
    /// closed as soon as they are accepted.
    public var maxConnectionsPerClient = 256
    /// After its first `HTTPTimeouts.bodyGrace`, a body must keep arriving at this average
    /// rate, or the request gets 408: one byte every few seconds must not hold a connection.
    public var minBodyBytesPerSecond = 1024
    /// Memory for requests that all connections together may hold beyond `freeBufferBytes` each,
    /// counted as allocated (buffers and bodies by capacity, not by bytes received). Past it, a
    /// request that needs more gets 503 `busy`, so trickled large bodies cannot exhaust memory.
    public var bufferedBodyBudget = 64 << 20
    /// What any connection may hold without drawing on `bufferedBodyBudget` (a whole head).
    public var freeBufferBytes = 20 * 1024
    /// Requests with bodies of at least this size are handled off the I/O thread: parsing them
    /// takes long enough to delay every other connection of the loop.
    public var offloadBodyBytes = 32 * 1024

    public init() {}
}
