import SQLite

/// The embedded engine: one writer thread with group commit, pooled readers (`SQLite.Database`).
/// A lock another process holds past the busy timeout is `StoreError.unavailable`.
struct SQLiteEngine: StoreEngine {
    let database: Database
    /// Entries checked against the database's change tracker, when it follows sessions and users.
    let sessionCache: SessionCache?

    init(database: Database) {
        self.database = database
        sessionCache = SessionCache.tracking(database)
    }

    var dialect: SQLDialect { .sqlite }

    var sessionCaching: any SessionCaching { sessionCache ?? UncachedSessions() }

    /// The existing database at `path`, migrated as any start would.
    static func open(path: String, readers: Int) throws -> SQLiteEngine {
        SQLiteEngine(database: try StoreOpener.open(path: path, readers: readers))
    }

    @discardableResult
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await Self.translatingErrors { try await database.write { try body($0) } }
    }

    // SQLite reads take microseconds from a pooled connection: run on the caller's thread.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try Self.translatingErrors { try database.read { try body($0) } }
    }

    func readBlocking<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try Self.translatingErrors { try database.read { try body($0) } }
    }

    func writeBlocking<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try Self.translatingErrors { try database.writeAndWait { try body($0) } }
    }

    func ping() async -> Bool { database.ping() }

    func reclaimSpace() async throws -> Int { try await Self.translatingErrors { try await FreePages.reclaim(database) } }

    func close() { database.close() }

    /// SQLite's errors as the Store's: SQLITE_BUSY (or LOCKED) once the busy timeout ran out
    /// means another process (an operator's shell, a backup tool) holds the lock, and nothing of
    /// this call was written.
    static func translatingErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SQLiteError {
            throw translated(error)
        }
    }

    static func translatingErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw translated(error)
        }
    }

    static func translated(_ error: SQLiteError) -> StoreError {
        if error.isBusy { return .unavailable(reason: "the database is locked by another process") }
        if error.isFailedSync { return .unavailable(reason: error.message) }
        if error.isUniqueViolation {
            // "UNIQUE constraint failed: users.email": SQLite names the columns, not the index.
            let columns = error.message.split(separator: ": ", maxSplits: 1).last.map(String.init) ?? error.message
            return .uniqueViolation(constraint: columns)
        }
        return .invariant(error.description)
    }
}
