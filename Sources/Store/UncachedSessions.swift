/// No session cache: every lookup reads the database (an engine without a change tracker, the
/// operators' commands, tests of the SQL itself).
struct UncachedSessions: SessionCaching {
    func lookup(_ tokenHash: TokenHash) -> LiveSession? { nil }

    func read(_ tokenHash: TokenHash, engine: any StoreEngine) async throws -> LiveSession? {
        try await SessionStore.readUncached(tokenHash, engine: engine)
    }

    func forget(sessionID: String) {}
    func dropCached(userID: String) {}
    func sweep() -> Int { 0 }
    var count: Int { 0 }
}
