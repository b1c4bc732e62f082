import SQLite
import Synchronization

/// Sessions recently authenticated, by token hash, so the hot path (`GET /api/me` and every
/// authenticated request) skips the database read while nothing changed. An entry holds the
/// versions of its session and user rows (`RowChangeTracker`) and is used only while they are
/// current: a logout, an ended session, a notification or a sign-in that touches either row
/// invalidates it before the write's caller resumes. Expiry and idleness are still checked on
/// every hit, exactly as the query does.
final class SessionCache: SessionCaching {
    /// A class, so a hit takes one reference out of the lock rather than copying every field.
    final class Entry: Sendable {
        let live: LiveSession
        let rows: [RowChangeTracker.Row]
        let versions: [UInt64]

        init(live: LiveSession, rows: [RowChangeTracker.Row], versions: [UInt64]) {
            self.live = live
            self.rows = rows
            self.versions = versions
        }
    }

    /// Bounds memory; past it an arbitrary entry makes room (a later re-read, nothing worse).
    static let capacity = 10_000

    private struct State {
        var entries: [TokenHash: Entry] = [:]
        /// Which entry holds a session, so an ended one is dropped at once.
        var hashBySessionID: [String: TokenHash] = [:]

        mutating func remove(_ tokenHash: TokenHash) {
            if let entry = entries.removeValue(forKey: tokenHash) { hashBySessionID[entry.live.session.id] = nil }
        }
    }

    private let state = Mutex(State())
    let tracker: RowChangeTracker

    let sessionsTable: Int
    let usersTable: Int

    init(tracker: RowChangeTracker) {
        self.tracker = tracker
        sessionsTable = tracker.tables.firstIndex(of: "sessions") ?? 0
        usersTable = tracker.tables.firstIndex(of: "users") ?? 0
    }

    /// The cached session and user when neither row changed since they were read.
    func lookup(_ tokenHash: TokenHash) -> LiveSession? {
        guard let entry = state.withLock({ $0.entries[tokenHash] }) else { return nil }
        guard tracker.isCurrent(entry.rows, versions: entry.versions) else {
            state.withLock { $0.remove(tokenHash) }
            return nil
        }
        return entry.live
    }

    func store(_ tokenHash: TokenHash, live: LiveSession, rows: [RowChangeTracker.Row], versions: [UInt64]) {
        let session = live.session
        let entry = Entry(live: live, rows: rows, versions: versions)
        state.withLock { state in
            if state.entries.count >= Self.capacity, state.entries[tokenHash] == nil, let victim = state.entries.keys.first {
                state.remove(victim)
            }
            state.entries[tokenHash] = entry
            state.hashBySessionID[session.id] = tokenHash
        }
    }

    /// Drops an ended session's entry. Correctness does not need it (the row's new version
    /// already makes the entry unusable); memory does, since its token is never looked up again.
    func forget(sessionID: String) {
        state.withLock { state in
            if let tokenHash = state.hashBySessionID[sessionID] { state.remove(tokenHash) }
        }
    }

    /// Drops every entry whose rows changed (sessions ended by account deletion, consent
    /// revoked, pruning, "end other sessions"); returns how many went.
    @discardableResult
    func sweep() -> Int {
        state.withLock { state in
            let stale = state.entries.filter { !tracker.isCurrent($0.value.rows, versions: $0.value.versions) }.keys
            for tokenHash in stale { state.remove(tokenHash) }
            return stale.count
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}

extension SessionCache {
    /// On SQLite the row versions already refuse the user's ended sessions: this frees the memory.
    func dropCached(userID: String) { sweep() }

    /// The cache of a database whose change tracker follows both tables a session is read from.
    static func tracking(_ database: Database) -> SessionCache? {
        database.changes.flatMap { tracker in
            tracker.tables.contains("sessions") && tracker.tables.contains("users") ? SessionCache(tracker: tracker) : nil
        }
    }

    /// Reads a session from the database and keeps it while its rows stay unchanged.
    func read(_ hash: TokenHash, engine: any StoreEngine) async throws -> LiveSession? {
        let sequence = tracker.sequence
        let (sessionsTable, usersTable) = (self.sessionsTable, self.usersTable)
        guard let (session, user, rows) = try await engine.read({ connection -> (SessionRecord, UserRecord, [RowChangeTracker.Row])? in
            guard let row = try connection.queryOne(Self.authenticateWithRowIDsSQL, [.blob(hash.bytes)]) else { return nil }
            let rows = [
                RowChangeTracker.Row(table: sessionsTable, rowid: try row.int64("session_rowid")),
                RowChangeTracker.Row(table: usersTable, rowid: try row.int64("user_rowid")),
            ]
            return (try SessionRecord(row: row), try UserRecord(row: row), rows)
        }) else { return nil }
        let live = LiveSession(session: session, user: user)
        if let versions = tracker.versions(of: rows, unchangedSince: sequence) {
            store(hash, live: live, rows: rows, versions: versions)
        }
        return live
    }

    /// With SQLite's rowids, which the cache's change tracker knows rows by.
    static let authenticateWithRowIDsSQL = """
        SELECT \(SessionRecord.columns), \(UserRecord.columns), s.rowid AS session_rowid, u.rowid AS user_rowid
        FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = ?
        """
}
