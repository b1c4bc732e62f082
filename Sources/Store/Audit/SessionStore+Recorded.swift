import SQLRow

extension SessionStore {
    /// Ends every session of the user (but `keptID`), each with its `session.ended` {reason},
    /// in the caller's transaction; returns how many ended.
    @discardableResult
    static func endAll(
        userID: String, except keptID: String? = nil, reason: SessionEndReason, context: AuditContext, now: Int64, outbox: WebhookOutbox?,
        in connection: any SQLConnection
    ) throws -> Int {
        let ended = try connection.query(
            "DELETE FROM sessions WHERE user_id = ? AND id <> ? RETURNING id", [.text(userID), .text(keptID ?? "")]
        ).map { try $0.string(0) }
        try AuditTrail.recordEnded(ended, userID: userID, reason: reason, context: context, now: now, outbox: outbox, in: connection)
        return ended.count
    }
}

extension SessionStore {
    /// Ends session `id` if it is `userID`'s, with its `session.ended` {reason} in the same
    /// transaction; false (nothing recorded) when it is unknown, ended, or another's.
    public func end(id: String, userID: String, reason: SessionEndReason, now: Int64, audit: AuditContext) async throws -> Bool {
        let outbox = self.outbox
        let ended = try await engine.write { connection -> Bool in
            guard try Self.end(id: id, userID: userID, in: connection) else { return false }
            try AuditTrail.recordEnded([id], userID: userID, reason: reason, context: audit, now: now, outbox: outbox, in: connection)
            return true
        }
        caching.forget(sessionID: id)
        return ended
    }

    /// Ends every session of the user but `keptID` ("end other sessions"), each recorded.
    @discardableResult
    public func endAll(userID: String, except keptID: String, now: Int64, audit: AuditContext) async throws -> Int {
        let outbox = self.outbox
        return try await engine.write {
            try Self.endAll(userID: userID, except: keptID, reason: .endedByUser, context: audit, now: now, outbox: outbox, in: $0)
        }
    }
}
