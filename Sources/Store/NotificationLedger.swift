import SQLRow

/// Server-to-server notifications already applied, by `jti` (`notifications`).
public enum NotificationLedger {
    /// Records `jti` in the transaction that applies the notification. Returns false when it
    /// was recorded before: the caller then applies nothing and answers `duplicate`.
    package static func recordIfNew(jti: String, status: String, now: Int64, in connection: any SQLConnection) throws -> Bool {
        try connection.run(
            "INSERT INTO notifications(jti, received_at, status) VALUES (?, ?, ?) ON CONFLICT(jti) DO NOTHING",
            [.text(jti), .integer(now), .text(status)]
        ) > 0
    }

    /// The status recorded for `jti`, or nil when never seen.
    package static func status(jti: String, in connection: any SQLConnection) throws -> String? {
        try connection.queryOne("SELECT status FROM notifications WHERE jti = ?", [.text(jti)])?.string("status")
    }
}
