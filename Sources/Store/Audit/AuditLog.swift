import JSON
import SQLRow

/// Reading and pruning the audit trail (writing is the changes' own business, `AuditTrail`).
public struct AuditLog: Sendable {
    let engine: any StoreEngine

    /// One page, newest first, strictly after `cursor`: keyset pagination on (time, insertion
    /// order), so events written meanwhile neither repeat nor push others off a page. The next
    /// cursor is nil on the last page.
    public func page(_ filter: AuditFilter, after cursor: AuditCursor?, limit: Int) async throws -> (events: [AuditEvent], next: AuditCursor?) {
        try await engine.read { try Self.page(filter, after: cursor, limit: limit, in: $0) }
    }

    /// `page` on the calling thread (the command line).
    public func pageBlocking(_ filter: AuditFilter, after cursor: AuditCursor?, limit: Int) throws -> (events: [AuditEvent], next: AuditCursor?) {
        try engine.readBlocking { try Self.page(filter, after: cursor, limit: limit, in: $0) }
    }

    static func page(
        _ filter: AuditFilter, after cursor: AuditCursor?, limit: Int, in connection: any SQLConnection
    ) throws -> (events: [AuditEvent], next: AuditCursor?) {
        var conditions: [String] = []
        var parameters: [SQLValue] = []
        if let userID = filter.userID {
            conditions.append("user_id = ?")
            parameters.append(.text(userID))
        }
        if let prefix = filter.typePrefix {
            let types = AuditEventType.matching(prefix: prefix)
            guard !types.isEmpty else { return ([], nil) }
            conditions.append("type IN (\(Array(repeating: "?", count: types.count).joined(separator: ", ")))")
            parameters += types.map { .text($0.rawValue) }
        }
        if let since = filter.since {
            conditions.append("at >= ?")
            parameters.append(.integer(since))
        }
        if let until = filter.until {
            conditions.append("at < ?")
            parameters.append(.integer(until))
        }
        if let cursor {
            conditions.append("(at < ? OR (at = ? AND seq < ?))")
            parameters += [.integer(cursor.at), .integer(cursor.at), .integer(cursor.seq)]
        }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        // One more than asked: whether a next page exists without a second query.
        parameters.append(.integer(Int64(limit + 1)))
        let rows = try connection.query(
            """
            SELECT seq, id, at, type, user_id, session_id, actor, ip, user_agent, detail FROM events
            \(whereClause) ORDER BY at DESC, seq DESC LIMIT ?
            """, parameters)
        let events = try rows.prefix(limit).map(Self.event)
        let next = rows.count > limit ? events.last?.cursor : nil
        return (events, next)
    }

    static func event(_ row: SQLRow) throws -> AuditEvent {
        let detailText = try row.string("detail")
        let detail = (try? JSONParser.object(Array(detailText.utf8))) ?? JSONObject()
        let at = try row.int64("at")
        return AuditEvent(
            id: try row.string("id"), at: at, type: try row.string("type"), userID: try row.optionalString("user_id"),
            sessionID: try row.optionalString("session_id"), actor: try row.string("actor"), ip: try row.optionalString("ip"),
            userAgent: try row.optionalString("user_agent"), detail: detail, cursor: AuditCursor(at: at, seq: try row.int64("seq")))
    }

    /// Deletes up to `limit` of the oldest events recorded before `before`, in one short
    /// transaction; returns how many went. Housekeeping calls it until fewer than `limit` go,
    /// so a large backlog never holds the write lock long.
    public func prune(before: Int64, limit: Int) async throws -> Int {
        try await engine.write { connection in
            try connection.run(
                "DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE at < ? ORDER BY at, seq LIMIT ?)",
                [.integer(before), .integer(Int64(limit))])
        }
    }

    /// How many events are kept (tests and the console's numbers).
    public func count() async throws -> Int {
        try await engine.read { try $0.queryOne("SELECT COUNT(*) FROM events")?.int(0) ?? 0 }
    }
}
