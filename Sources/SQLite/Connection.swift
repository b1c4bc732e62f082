import CSQLite

/// One SQLite connection with its statement cache. Not thread-safe: it is used only by the
/// thread that holds it (the writer thread, or a reader checked out of the pool).
public final class Connection {
    /// How a transaction takes its locks. `immediate` takes the write lock at BEGIN, so a
    /// read-then-write never fails halfway with SQLITE_BUSY.
    public enum TransactionKind: Sendable {
        case deferred, immediate, exclusive
    }

    let handle: OpaquePointer
    private var statements: [String: Statement] = [:]
    private var isClosed = false

    /// Applications use a fixed set of SQL strings; the cap only guards against a caller that
    /// builds SQL dynamically.
    static let statementCacheLimit = 512

    /// Opens a standalone connection (read-write, created when missing). `Database` is the
    /// thread-safe way to share a file; this is for tools and tests.
    public convenience init(path: String) throws {
        try self.init(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
    }

    /// How long a statement waits for another connection's lock before failing with
    /// SQLITE_BUSY, unless the database is opened with another.
    public static let defaultBusyTimeout: Duration = .seconds(5)

    init(path: String, flags: Int32, busyTimeout: Duration = defaultBusyTimeout) throws {
        var handle: OpaquePointer?
        // NOMUTEX: each connection is confined to one thread at a time, so SQLite's own
        // per-connection mutex would be pure overhead.
        let result = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard result == SQLITE_OK, let handle else {
            let error = SQLiteError(resultCode: result, connection: handle, sql: nil)
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        // Another process (a second server, the migrate command) may hold the write lock.
        let (seconds, attoseconds) = busyTimeout.components
        sqlite3_busy_timeout(handle, Int32(clamping: min(max(seconds, 0), Int64(Int32.max)) * 1000 + attoseconds / 1_000_000_000_000_000))
    }

    deinit {
        close()
    }

    /// Finalizes the cached statements and closes the connection. Later calls throw.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    // MARK: - Running SQL

    /// Runs one or more statements separated by semicolons, without parameters (schema, pragmas).
    public func execute(_ sql: String) throws {
        try checkOpen(sql)
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        guard result == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
            sqlite3_free(message)
            throw SQLiteError(code: result, extendedCode: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// Runs one statement and returns how many rows it inserted, updated or deleted.
    @discardableResult
    public func run(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> Int {
        try statement(sql).run(parameters)
        return Int(sqlite3_changes(handle))
    }

    public func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> [Row] {
        try statement(sql).query(parameters)
    }

    /// The first row, or `nil`; stops stepping after it.
    public func queryOne(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> Row? {
        try statement(sql).query(parameters, limit: 1).first
    }

    /// The main database's WAL file as SQLite names it (beside the real file when the path is a
    /// symlink); nil for a database with no file.
    var walPath: String? {
        guard let file = sqlite3_db_filename(handle, "main"), file.pointee != 0, let wal = sqlite3_filename_wal(file) else { return nil }
        return String(cString: wal)
    }

    public var lastInsertRowID: Int64 {
        sqlite3_last_insert_rowid(handle)
    }

    /// Copies into the database file the WAL frames no reader still needs, without waiting for
    /// readers or a writer. False when another checkpoint was running or it failed.
    @discardableResult
    func checkpointPassively() -> Bool {
        sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK
    }

    /// True between BEGIN (or an outermost SAVEPOINT) and COMMIT/ROLLBACK.
    public var isInTransaction: Bool {
        sqlite3_get_autocommit(handle) == 0
    }

    // MARK: - Transactions

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// Inside an open transaction (for instance in `Database.write`, which already runs in one)
    /// this nests as a savepoint instead, since SQLite has no nested BEGIN.
    @discardableResult
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: (Connection) throws -> T) throws -> T {
        if isInTransaction { return try savepoint(body) }
        switch kind {
        case .deferred: try run("BEGIN DEFERRED")
        case .immediate: try run("BEGIN IMMEDIATE")
        case .exclusive: try run("BEGIN EXCLUSIVE")
        }
        do {
            let result = try body(self)
            try run("COMMIT")
            return result
        } catch {
            // SQLite may already have rolled back (on I/O errors, a full disk, an interrupt).
            if isInTransaction { _ = try? run("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` in a savepoint: its changes are kept when it returns and undone alone when it
    /// throws, leaving the enclosing transaction open.
    @discardableResult
    public func savepoint<T>(_ body: (Connection) throws -> T) throws -> T {
        // One fixed name nests correctly: ROLLBACK TO and RELEASE act on the innermost one.
        try run("SAVEPOINT siwa")
        do {
            let result = try body(self)
            try run("RELEASE siwa")
            return result
        } catch {
            if isInTransaction {
                _ = try? run("ROLLBACK TO siwa")
                _ = try? run("RELEASE siwa")
            }
            throw error
        }
    }

    // MARK: - Statement cache

    func statement(_ sql: String) throws -> Statement {
        if let statement = statements[sql] { return statement }
        try checkOpen(sql)
        if statements.count >= Self.statementCacheLimit {
            statements.removeAll()
        }
        let statement = try Statement(connection: handle, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// How many prepared statements the cache holds (for tests and diagnostics).
    var cachedStatementCount: Int { statements.count }

    private func checkOpen(_ sql: String) throws {
        if isClosed { throw SQLiteError.misuse("connection is closed", sql: sql) }
    }
}
