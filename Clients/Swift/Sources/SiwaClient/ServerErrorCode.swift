/// The server's stable, machine-readable `error` code. Known codes are named here; any other
/// the server sends arrives as it is.
public struct ServerErrorCode: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let invalidRequest = Self("invalid_request")
    public static let invalidToken = Self("invalid_token")
    public static let invalidGrant = Self("invalid_grant")
    public static let invalidCredentials = Self("invalid_credentials")
    public static let unauthenticated = Self("unauthenticated")
    public static let forbidden = Self("forbidden")
    public static let notFound = Self("not_found")
    public static let conflict = Self("conflict")
    public static let accountExists = Self("account_exists")
    public static let appleIDInUse = Self("apple_id_in_use")
    public static let lastSignInMethod = Self("last_sign_in_method")
    public static let reauthenticationRequired = Self("reauthentication_required")
    public static let emailUnverified = Self("email_unverified")
    public static let weakPassword = Self("weak_password")
    public static let tooManyAttempts = Self("too_many_attempts")
    public static let tooManyRequests = Self("too_many_requests")
    public static let appleUnavailable = Self("apple_unavailable")
    public static let keysUnavailable = Self("keys_unavailable")
    public static let databaseUnavailable = Self("database_unavailable")
    public static let notConfigured = Self("not_configured")
    public static let busy = Self("busy")
}
