import SQLite

/// The product's database, behind one face: every operation the application performs is a
/// named call on this object or one of its parts, and each runs as one transaction. Which
/// engine holds the rows (SQLite today) is this module's business alone.
public final class Store: Sendable {
    let engine: any StoreEngine
    /// The SQLite database when that is the engine (tests count its commits).
    let database: Database?
    public let users: UserStore
    /// Sessions; on SQLite served from a cache that the engine keeps true.
    public let sessions: SessionStore
    public let replay: ReplayGuard
    public let pendingProfiles: PendingProfileStore
    public let webSignIns: WebSignInStore
    /// Apple's refresh and access tokens, sealed with `data_key`.
    public let vault: AppleTokenVault
    public let revocations: RevocationQueue
    public let refreshSchedule: RefreshValidationSchedule
    public let serverState: ServerState

    /// Opens the database at `path` (creating it and its folder) with its schema brought up
    /// to date; refuses a database migrated by a newer build. `dataKey` gives the key that seals
    /// Apple's tokens, asked once the database (and its folder) exists.
    public convenience init(path: String, readers: Int = 4, dataKey: () throws -> [UInt8]) throws {
        let database = try StoreOpener.open(path: path, readers: readers)
        do {
            try self.init(engine: SQLiteEngine(database: database), database: database, sessionCache: SessionStore.cache(for: database), dataKey: dataKey())
        } catch {
            database.close()
            throw error
        }
    }

    init(engine: any StoreEngine, database: Database?, sessionCache: SessionCache?, dataKey: [UInt8]) throws {
        self.engine = engine
        self.database = database
        vault = try AppleTokenVault(engine: engine, key: dataKey)
        revocations = try RevocationQueue(engine: engine, key: dataKey)
        users = UserStore(engine: engine)
        sessions = SessionStore(engine: engine, cache: sessionCache)
        replay = ReplayGuard(engine: engine)
        pendingProfiles = PendingProfileStore(engine: engine)
        webSignIns = WebSignInStore(engine: engine)
        refreshSchedule = RefreshValidationSchedule(engine: engine)
        serverState = ServerState(engine: engine)
    }

    /// Batches `last_seen_at` writes of authenticated requests into one commit per `interval`.
    public func lastSeenBatcher(interval: Int64, now: Int64) -> LastSeenBatcher {
        LastSeenBatcher(engine: engine, interval: interval, now: now)
    }

    /// Whether the database answers a trivial query (for `/readyz`).
    public func ping() async -> Bool { await engine.ping() }

    /// Gives the disk space of deleted rows back, a bounded amount per call.
    @discardableResult
    public func reclaimFreePages() async throws -> Int { try await engine.reclaimSpace() }

    public func close() { engine.close() }

    // MARK: - Without a running server

    /// The `migrate` command: applies pending migrations; returns those applied.
    public static func migrate(path: String) throws -> [(version: Int, name: String)] {
        try StoreOpener.migrate(path: path).map { ($0.version, $0.name) }
    }

    /// What `check-config` says about a database: it opens, takes a write lock, and holds a
    /// schema this build understands.
    public static func inspect(path: String) -> (ok: Bool, detail: String) {
        do {
            let database = try Database(path: path, readers: 1)
            defer { database.close() }
            try database.writeAndWait { _ in }
            let version = try database.read { connection -> Int? in
                let tables = try connection.queryOne("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
                guard try tables?.int("n") == 1 else { return 0 }
                return try connection.queryOne("SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations")?.int("version")
            }
            if let version, version > Schema.version {
                return (false, "schema version \(version) is newer than this build (\(Schema.version))")
            }
            return (true, "writable, schema version \(version ?? 0) of \(Schema.version)")
        } catch {
            return (false, "\(error)")
        }
    }
}
