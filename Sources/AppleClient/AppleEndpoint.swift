/// Apple's endpoints under `apple_base_url`, also the `endpoint` label of the Apple metrics.
public enum AppleEndpoint: String, Sendable, CaseIterable {
    case keys
    case token
    case revoke
    case userMigrationInfo = "usermigrationinfo"

    public var path: String {
        switch self {
        case .keys: "/auth/keys"
        case .token: "/auth/token"
        case .revoke: "/auth/revoke"
        case .userMigrationInfo: "/auth/usermigrationinfo"
        }
    }
}

/// Told about every call to Apple, for `siwa_apple_requests_total{endpoint,outcome}` and
/// `siwa_apple_request_duration_seconds`. Outcomes are a fixed vocabulary: `ok`,
/// `invalid_grant`, `invalid_request`, `invalid_client`, `rejected`, `unavailable`.
public protocol AppleCallObserver: Sendable {
    func appleCall(endpoint: AppleEndpoint, outcome: String, seconds: Double)
}
