import SQLRow

/// Counts of one hour of the audit trail, by a member of the events' `detail`.
public struct HourlyCount: Sendable, Equatable {
    /// The hour's start, seconds since 1970 (UTC).
    public let hour: Int64
    /// The `detail` member's value (a sign-in's `method`); nil when it had none.
    public let key: String?
    public let count: Int

    public init(hour: Int64, key: String?, count: Int) {
        self.hour = hour
        self.key = key
        self.count = count
    }
}

extension AuditLog {
    /// Events of `type` per hour from `since` (inclusive) to `until` (exclusive), by the string
    /// member `detailKey` of their detail: the console's charts. One index range (`type`, `at`)
    /// and a grouping in the database; the member is read with each engine's JSON function.
    public func hourlyCounts(type: AuditEventType, by detailKey: String, since: Int64, until: Int64) async throws -> [HourlyCount] {
        precondition(detailKey.utf8.allSatisfy { $0 == UInt8(ascii: "_") || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) }, "a detail key is a fixed name")
        return try await engine.read { connection in
            let member = connection.dialect == .postgres ? "(detail::jsonb ->> '\(detailKey)')" : "json_extract(detail, '$.\(detailKey)')"
            return try connection.query(
                """
                SELECT (at / 3600) * 3600 AS hour, \(member) AS key, COUNT(*) AS n FROM events
                WHERE type = ? AND at >= ? AND at < ? GROUP BY 1, 2 ORDER BY 1, 2
                """, [.text(type.rawValue), .integer(since), .integer(until)]
            ).map { row in
                HourlyCount(hour: try row.int64("hour"), key: try row.optionalString("key"), count: try row.int("n"))
            }
        }
    }
}
