import SQLRow

/// One `sessions` row. The token itself is never stored, only its SHA-256.
public struct SessionRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var deviceName: String?
    public var createdAt: Int64
    public var lastSeenAt: Int64
    /// The absolute expiry.
    public var expiresAt: Int64
    /// How and from where it was made; read by listings only (nil elsewhere, and for sessions
    /// made before sessions knew).
    public var origin: SessionOrigin?

    /// The `sessions` columns, aliased so a join with `users` has no clashing names.
    static let columns = """
        s.id AS session_id, s.user_id AS session_user_id, s.device_name AS session_device_name,
        s.created_at AS session_created_at, s.last_seen_at AS session_last_seen_at, s.expires_at AS session_expires_at
        """

    init(row: SQLRow) throws {
        id = try row.string("session_id")
        userID = try row.string("session_user_id")
        deviceName = try row.optionalString("session_device_name")
        createdAt = try row.int64("session_created_at")
        lastSeenAt = try row.int64("session_last_seen_at")
        expiresAt = try row.int64("session_expires_at")
    }

    init(id: String, userID: String, deviceName: String?, createdAt: Int64, lastSeenAt: Int64, expiresAt: Int64) {
        self.id = id
        self.userID = userID
        self.deviceName = deviceName
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.expiresAt = expiresAt
    }
}

/// A session just created: the token is handed to the client once and cannot be recovered.
public struct NewSession: Sendable {
    /// 256 random bits, base64url without padding.
    public let token: String
    public let record: SessionRecord
}
