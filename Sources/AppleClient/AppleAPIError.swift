/// How a call to Apple failed, already sorted into what the server does about it.
public enum AppleAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The code or refresh token is invalid, expired, used, or issued to another client.
    case invalidGrant
    /// Apple says the request is malformed; for a refresh token it has also meant "revoked".
    case invalidRequest
    /// Apple refused our client authentication: a configuration problem (key, team, client id).
    case invalidClient
    /// Another 4xx error code from Apple.
    case rejected(code: String)
    /// Unreachable, timed out, 5xx, or an answer that is not Apple's JSON.
    case unavailable(reason: String)

    /// The metric outcome label.
    public var outcome: String {
        switch self {
        case .invalidGrant: "invalid_grant"
        case .invalidRequest: "invalid_request"
        case .invalidClient: "invalid_client"
        case .rejected: "rejected"
        case .unavailable: "unavailable"
        }
    }

    public var description: String {
        switch self {
        case .rejected(let code): "Apple refused the request (\(code))"
        case .unavailable(let reason): "Apple unavailable: \(reason)"
        default: "Apple answered \(outcome)"
        }
    }
}
