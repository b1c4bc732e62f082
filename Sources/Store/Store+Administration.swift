/// The operators' changes of docs/guides/connecting-your-backend.md (the admin API and `siwa-server users`) that are more than
/// one existing operation.
extension Store {
    /// Ends every session of the user, at once: this process's session cache drops them before
    /// returning, other instances' when the database's NOTIFY reaches them (docs/guides/postgresql.md). nil when
    /// there is no such user; else how many sessions ended.
    public func endSessions(userID: String, now: Int64, audit: AuditContext = .admin) async throws -> Int? {
        let outbox = self.outbox
        let ended = try await engine.write { connection -> Int? in
            guard try UserStore.user(id: userID, in: connection) != nil else { return nil }
            return try SessionStore.endAll(userID: userID, reason: .admin, context: audit, now: now, outbox: outbox, in: connection)
        }
        if ended != nil { sessions.dropCached(userID: userID) }
        return ended
    }
}
