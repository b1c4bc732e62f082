/// How an engine keeps sessions in memory, so that the hot path (every authenticated request)
/// skips the database while nothing changed. Each engine gives its own
/// (`StoreEngine.sessionCaching`): SQLite checks entries against its change tracker, PostgreSQL
/// drops them when the database NOTIFYs a change.
protocol SessionCaching: Sendable {
    /// The cached session of a token's hash, or nil (then `read` asks the database).
    func lookup(_ tokenHash: TokenHash) -> LiveSession?
    /// Reads the session from the database, keeping it for as long as the strategy can tell
    /// it is unchanged.
    func read(_ tokenHash: TokenHash, engine: any StoreEngine) async throws -> LiveSession?
    /// Drops a session this process just ended.
    func forget(sessionID: String)
    /// Drops the sessions of a user whose sessions just ended, in this process at once.
    func dropCached(userID: String)
    /// Frees the memory of entries that ended some other way; returns how many went.
    @discardableResult
    func sweep() -> Int
    /// Sessions held in memory.
    var count: Int { get }
}
