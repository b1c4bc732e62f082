/// Size limits enforced while parsing, so that a hostile client cannot make the server buffer
/// without bound. Defaults follow SPEC §7.
public struct HTTPLimits: Sendable, Equatable {
    /// The request line and all header lines together (SPEC: 16 KiB → 431).
    public var maxHeaderBytes = 16 * 1024
    /// Header fields per request, and trailer fields per chunked body (SPEC: 100 → 431).
    public var maxHeaderFields = 100
    /// The request line alone; longer is 414.
    public var maxRequestLineBytes = 8 * 1024
    /// The decoded body; larger is 413.
    public var maxBodyBytes = 1_048_576
    /// One chunk-size line with its extensions.
    public var maxChunkLineBytes = 4 * 1024

    public init() {}
}
