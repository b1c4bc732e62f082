import SQLRow

/// Where a session came from: how it was made and the request that made it (shown in
/// `/api/sessions`, the admin API and the account page, so a person recognises a device).
public struct SessionOrigin: Sendable, Equatable {
    public var method: SignInMethod
    /// The client address, after `trusted_proxies`.
    public var ip: String?
    /// At most 256 bytes of UTF-8.
    public var userAgent: String?

    public init(method: SignInMethod, ip: String?, userAgent: String?) {
        self.method = method
        self.ip = ip
        self.userAgent = userAgent
    }

    /// The origin of a session made by `method` for the request `audit` describes.
    public init(method: SignInMethod, _ audit: AuditContext) {
        self.init(method: method, ip: audit.ip, userAgent: audit.userAgent)
    }

    /// The session columns a listing adds to `SessionRecord.columns`.
    static let columns = "s.method AS session_method, s.ip AS session_ip, s.user_agent AS session_user_agent"

    /// nil for a session made before sessions knew (no method).
    init?(row: SQLRow) throws {
        guard let method = try row.optionalString("session_method").flatMap(SignInMethod.init(rawValue:)) else { return nil }
        self.init(method: method, ip: try row.optionalString("session_ip"), userAgent: try row.optionalString("session_user_agent"))
    }
}
