/// Why a call failed. Descriptions name the host, the status, and OpenSSL's or the system's
/// reason, never a request body or header value: those carry client secrets, codes and tokens.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidURL
    /// `http://` to a host that is not loopback.
    case plainHTTPNotAllowed
    /// A method or header the client refuses to put on the wire (a line break, say).
    case invalidRequest(String)
    case connectFailed(String)
    case tlsFailed(String)
    /// The connect timeout or the total deadline passed.
    case timedOut
    /// The body exceeded `maxResponseBytes` (on the wire or inflated).
    case responseTooLarge
    case malformedResponse(String)
    /// The connection closed before any byte of a response. When `mayHaveBeenSent`, the server
    /// may have acted on the request, so it was not sent again unless it was idempotent.
    case connectionClosed(mayHaveBeenSent: Bool)

    public var description: String {
        switch self {
        case .invalidURL: "invalid URL"
        case .plainHTTPNotAllowed: "plain http:// is allowed only to loopback hosts"
        case .invalidRequest(let reason): "invalid request: \(reason)"
        case .connectFailed(let reason): "connect failed: \(reason)"
        case .tlsFailed(let reason): "TLS failed: \(reason)"
        case .timedOut: "timed out"
        case .responseTooLarge: "response too large"
        case .malformedResponse(let reason): "malformed response: \(reason)"
        case .connectionClosed(let mayHaveBeenSent):
            mayHaveBeenSent
                ? "connection closed before a response; the request may have been received"
                : "connection closed before the request was sent"
        }
    }
}
