import SQLite
import Synchronization

/// Sessions recently authenticated, by token hash, so the hot path (`GET /api/me` and every
/// authenticated request) skips the database read while nothing changed. An entry holds the
/// versions of its session and user rows (`RowChangeTracker`) and is used only while they are
/// current: a logout, an ended session, a notification or a sign-in that touches either row
/// invalidates it before the write's caller resumes. Expiry and idleness are still checked on
/// every hit, exactly as the query does.
final class SessionCache: Sendable {
    struct Entry: Sendable {
        let session: SessionRecord
        let user: UserRecord
        let rows: [RowChangeTracker.Row]
        let versions: [UInt64]
    }

    /// Bounds memory; past it an arbitrary entry makes room (a later re-read, nothing worse).
    static let capacity = 10_000

    private let entries = Mutex<[[UInt8]: Entry]>([:])
    let tracker: RowChangeTracker

    let sessionsTable: Int
    let usersTable: Int

    init(tracker: RowChangeTracker) {
        self.tracker = tracker
        sessionsTable = tracker.tables.firstIndex(of: "sessions") ?? 0
        usersTable = tracker.tables.firstIndex(of: "users") ?? 0
    }

    /// The cached session and user when neither row changed since they were read.
    func lookup(_ tokenHash: [UInt8]) -> (SessionRecord, UserRecord)? {
        guard let entry = entries.withLock({ $0[tokenHash] }) else { return nil }
        guard tracker.isCurrent(entry.rows, versions: entry.versions) else {
            entries.withLock { _ = $0.removeValue(forKey: tokenHash) }
            return nil
        }
        return (entry.session, entry.user)
    }

    func store(_ tokenHash: [UInt8], session: SessionRecord, user: UserRecord, rows: [RowChangeTracker.Row], versions: [UInt64]) {
        let entry = Entry(session: session, user: user, rows: rows, versions: versions)
        entries.withLock { entries in
            if entries.count >= Self.capacity, entries[tokenHash] == nil { entries.remove(at: entries.startIndex) }
            entries[tokenHash] = entry
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
