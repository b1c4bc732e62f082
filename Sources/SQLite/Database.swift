import CSQLite
import Synchronization

/// A SQLite database file shared by the whole process.
///
/// Writes go to one writer thread that owns the only write connection and commits queued
/// writes together (see `Writer`); reads run on the caller's thread on pooled read-only
/// connections, and thanks to WAL they never wait for a writer.
public final class Database: Sendable {
    public let path: String
    private let writer: Writer
    private let readers: ReaderPool
    /// Row changes in the tables named at init (nil when none were).
    public let changes: RowChangeTracker?
    private let isClosed = Mutex(false)

    /// Opens (creating when missing, with its folder) the database at `path`.
    /// - Parameters:
    ///   - readers: how many idle read connections to keep; more are opened under load.
    ///   - synchronous: `.full` (the default) makes every acknowledged write durable.
    ///   - trackedTables: tables whose row changes `changes` reports, for caches of their rows.
    ///   - busyTimeout: how long a statement waits for another process's lock before it fails
    ///     with SQLITE_BUSY.
    public init(
        path: String, readers: Int = 4, synchronous: Synchronous = .full, trackedTables: [String] = [],
        busyTimeout: Duration = Connection.defaultBusyTimeout
    ) throws {
        // NOMUTEX connections still need a thread-safe build for SQLite's shared state.
        guard sqlite3_threadsafe() != 0 else {
            throw SQLiteError.misuse("the SQLite library was built without thread support")
        }
        Self.configureProcess
        try DatabaseFile.prepare(path: path)
        let connection = try Connection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, busyTimeout: busyTimeout)
        // With FULL the WALSyncer syncs after COMMIT, so COMMIT itself need not; but where SQLite
        // is built without POWERSAFE_OVERWRITE, FULL also pads the WAL at each commit, so FULL it is.
        let walPath = synchronous == .full && sqlite3_compileoption_used("POWERSAFE_OVERWRITE=0") == 0 ? connection.walPath : nil
        try Self.configureWriter(connection, synchronous: walPath != nil ? .normal : synchronous)
        self.path = path
        self.readers = ReaderPool(path: path, capacity: readers) {
            try Self.openReader(path: path, busyTimeout: busyTimeout)
        }
        changes = trackedTables.isEmpty ? nil : RowChangeTracker(tables: trackedTables)
        let checkpointer = Checkpointer { try Self.openCheckpointer(path: path, synchronous: synchronous, busyTimeout: busyTimeout) }
        let syncer = try walPath.map(WALSyncer.init(walPath:))
        do {
            self.writer = try Writer(connection: connection, path: path, tracker: changes, checkpointer: checkpointer, syncer: syncer)
        } catch {
            syncer?.stop()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Process-wide SQLite settings, applied once before the first connection opens (SQLite
    /// refuses them once initialized, which a second `Database` would find: harmless).
    private static let configureProcess: Void = {
        _ = siwa_sqlite_disable_memory_statistics()
    }()

    // MARK: - Writing

    /// Runs `body` on the writer thread inside a transaction shared with the other writes queued
    /// at the same time, each in its own savepoint. Returns once the transaction is committed
    /// (and with `.full` once the WAL holding it is on disk: other connections may read it up
    /// to one fsync sooner); if `body` throws, only its own changes are undone.
    ///
    /// Use the connection passed to `body`: `read` from inside it sees only committed data, not
    /// this batch. The write runs even if the calling task is cancelled after queuing it.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job = PendingWrite(exclusive: false, body: body) { continuation.resume(with: $0) }
            do {
                try writer.submit(job)
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// `write`, blocking the calling thread until committed: for the command line and
    /// migrations, never for a request handler on an I/O thread.
    @discardableResult
    public func writeAndWait<T>(_ body: (Connection) throws -> T) throws -> T {
        try submitAndWait(exclusive: false, body)
    }

    /// Runs `body` alone on the writer connection with no transaction around it; `body` manages
    /// its own (the migrator takes one `BEGIN IMMEDIATE` per migration). Blocks like
    /// `writeAndWait`. A transaction left open is rolled back and reported as an error.
    @discardableResult
    public func writeWithoutTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try submitAndWait(exclusive: true, body)
    }

    private func submitAndWait<T>(exclusive: Bool, _ body: (Connection) throws -> T) throws -> T {
        guard !writer.isCurrentThread else {
            throw SQLiteError.misuse("writeAndWait called from inside a write would wait for itself")
        }
        // The caller stays blocked until the writer has run and released `body`, so letting it
        // cross to the writer thread is safe even though it is neither escaping nor Sendable.
        return try withoutActuallyEscaping(body) { body in
            let handoff = Handoff<T>()
            try writer.submit(PendingWrite(exclusive: exclusive, body: body, deliver: handoff.deliver))
            return try handoff.wait().get()
        }
    }

    /// Batches committed so far, and writes still queued (for tests and diagnostics).
    var writerCommitCount: Int { writer.commitCount }
    var writerQueuedCount: Int { writer.queuedCount }
    var writerIsAccepting: Bool { writer.isAccepting }
    /// Checkpoints the writer ran itself rather than leave them to the checkpointer thread.
    var writerCheckpointCount: Int { writer.ownCheckpointCount }
    var checkpointer: Checkpointer { writer.checkpointer }
    /// Syncs the WAL after commits with `.full`; nil otherwise.
    var syncer: WALSyncer? { writer.syncer }
    /// Looks for another process's commits finished so far (tests wait for the next one).
    var writerForeignCommitChecks: Int { writer.foreignCommitCheckCount }

    // MARK: - Reading

    /// Runs `body` on the calling thread with a read-only connection. Sees every write that was
    /// committed before it started, and never waits for the writer.
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try readers.withConnection(body)
    }

    /// Whether the database answers a query (for readiness checks).
    public func ping() -> Bool {
        guard writer.syncer?.failure == nil else { return false }
        return (try? read { try $0.queryOne("SELECT 1")?.int(0) == 1 }) ?? false
    }

    // MARK: - Closing

    /// Finishes the queued writes, checkpoints the WAL into the database file and closes every
    /// connection. Idempotent; later reads and writes throw. Called from inside a write body it
    /// cannot wait for itself: it returns at once and the writer winds down after that batch.
    public func close() {
        isClosed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            writer.stop()
            readers.close()
        }
    }

    // MARK: - Connections

    private static func configureWriter(_ connection: Connection, synchronous: Synchronous) throws {
        // WAL lets readers run while a write transaction is open, and makes a commit one
        // sequential append (plus one fsync, by the WALSyncer with `.full`).
        let mode = try connection.queryOne("PRAGMA journal_mode=WAL")?.string(0)
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "cannot use WAL journal mode (got \(mode ?? "nothing"))")
        }
        // temp_store=MEMORY keeps the savepoint journal of each batched job in memory. On file,
        // SQLite spills it past 64 KiB and then never truncates it until COMMIT, so one job that
        // touches many pages makes every later job of its batch write each page it changes to
        // a temporary file (seen as three times the writes per sign-in with the audit trail).
        // In memory it is emptied at every RELEASE, so it holds one job's pages at most.
        try connection.execute("PRAGMA foreign_keys=ON; PRAGMA synchronous=\(synchronous.rawValue); PRAGMA temp_store=MEMORY")
    }

    private static func openCheckpointer(path: String, synchronous: Synchronous, busyTimeout: Duration) throws -> Connection {
        let connection = try Connection(path: path, flags: SQLITE_OPEN_READWRITE, busyTimeout: busyTimeout)
        // A checkpoint fsyncs as its connection's `synchronous` says: the database's setting.
        try connection.execute("PRAGMA synchronous=\(synchronous.rawValue)")
        return connection
    }

    private static func openReader(path: String, busyTimeout: Duration) throws -> Connection {
        let connection = try Connection(path: path, flags: SQLITE_OPEN_READWRITE, busyTimeout: busyTimeout)
        // query_only: a read body can never write behind the writer's back.
        try connection.execute("PRAGMA foreign_keys=ON; PRAGMA query_only=ON")
        return connection
    }
}
