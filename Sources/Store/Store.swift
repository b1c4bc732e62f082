import OpenSSLCrypto

/// The product's database, behind one face: every operation the application performs is a
/// named call on this object or one of its parts, and each runs as one transaction. Which
/// engine holds the rows (SQLite or PostgreSQL, each under Engine/) is this module's business alone.
public final class Store: Sendable {
    let engine: any StoreEngine
    public let users: UserStore
    /// Sessions, served from a cache that the engine keeps true (SQLite's change tracker,
    /// PostgreSQL's NOTIFY).
    public let sessions: SessionStore
    public let replay: ReplayGuard
    public let pendingProfiles: PendingProfileStore
    public let webSignIns: WebSignInStore
    /// The operators' console sessions (their cookies' hashes).
    public let consoleSessions: ConsoleSessionStore
    /// Apple's refresh and access tokens, sealed with `data_key`.
    public let vault: AppleTokenVault
    public let revocations: RevocationQueue
    public let refreshSchedule: RefreshValidationSchedule
    public let serverState: ServerState
    /// The access-token signing keys, sealed with `data_key`.
    public let signingKeys: SigningKeyStore
    /// Each user's way through a team transfer (docs/guides/team-transfer.md).
    public let transfers: TeamTransferStore
    /// Where changes append their webhook events (nothing without a renderer).
    let outbox: WebhookOutbox
    /// The outbox's events on their way to the receiver.
    public let webhooks: WebhookQueue
    /// The mail outbox's messages on their way to the SMTP server (docs/guides/passwords-and-email.md).
    public let mail: MailQueue
    /// The audit trail's reading and pruning (docs/reference/http-api.md, "Activity").
    public let audit: AuditLog

    init(
        engine: any StoreEngine, events: WebhookEventRenderer?, mail: MailSettings? = nil,
        dataKey: [UInt8]
    ) throws {
        self.engine = engine
        let cipher = try AESGCM(key: dataKey)
        outbox = WebhookOutbox(renderer: events, cipher: cipher, mail: MailOutbox(settings: mail, cipher: cipher))
        webhooks = WebhookQueue(engine: engine, cipher: cipher)
        self.mail = MailQueue(engine: engine, cipher: cipher)
        vault = try AppleTokenVault(engine: engine, key: dataKey)
        revocations = try RevocationQueue(engine: engine, key: dataKey)
        users = UserStore(engine: engine)
        sessions = SessionStore(engine: engine, caching: engine.sessionCaching, outbox: outbox)
        replay = ReplayGuard(engine: engine)
        pendingProfiles = PendingProfileStore(engine: engine)
        webSignIns = WebSignInStore(engine: engine)
        consoleSessions = ConsoleSessionStore(engine: engine)
        refreshSchedule = RefreshValidationSchedule(engine: engine)
        serverState = ServerState(engine: engine)
        signingKeys = try SigningKeyStore(engine: engine, key: dataKey)
        transfers = TeamTransferStore(engine: engine, outbox: outbox)
        audit = AuditLog(engine: engine)
    }

    /// Opens the store `location` names: a PostgreSQL URL (`postgres://…` or `postgresql://…`,
    /// as libpq reads it), else a SQLite file path. On PostgreSQL the schema is migrated first,
    /// under an advisory lock, then a pool of `connections` serves every call. With `events`,
    /// every change to a user appends its webhook event in the change's transaction; with `mail`
    /// (`smtp_url` set), changes that mail someone write the message in theirs.
    /// `busyTimeout` is SQLite's (nil: 5 s); PostgreSQL's connections fail rather than wait.
    public static func open(
        _ location: String, connections: Int, busyTimeout: Duration? = nil, events: WebhookEventRenderer? = nil,
        mail: MailSettings? = nil, dataKey: () throws -> [UInt8]
    ) throws -> Store {
        guard isPostgres(location) else {
            return try openSQLite(location, readers: connections, busyTimeout: busyTimeout, events: events, mail: mail, dataKey: dataKey)
        }
        return try openPostgres(location, connections: connections, events: events, mail: mail, dataKey: dataKey)
    }

    /// Whether `location` is a PostgreSQL URL rather than a SQLite path.
    public static func isPostgres(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// `location` fit for logs and reports: a URL's password replaced by `***`.
    public static func redacted(_ location: String) -> String {
        guard isPostgres(location), let slash = location.firstIndex(of: "/") else { return location }
        let rest = location[location.index(slash, offsetBy: 2)...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return location }
        return String(location[...colon]) + "***" + String(location[at...])
    }

    /// Batches `last_seen_at` writes of authenticated requests into one commit per `interval`.
    public func lastSeenBatcher(interval: Int64, now: Int64) -> LastSeenBatcher {
        LastSeenBatcher(engine: engine, interval: interval, now: now)
    }

    /// Whether the database answers a trivial query (for `/readyz`).
    public func ping() async -> Bool { await engine.ping() }

    /// On PostgreSQL, whether the session cache's listener is listening now (sessions may be
    /// served from memory) and how often the cache stopped serving for its listener's sake; nil
    /// on SQLite, whose cache needs no listener.
    public var sessionCacheListener: SessionCacheListenerState? {
        guard let cache = engine.sessionCaching as? NotifiedSessionCache else { return nil }
        return SessionCacheListenerState(isListening: cache.isListening, outages: cache.outages)
    }

    /// Gives the disk space of deleted rows back, a bounded amount per call.
    @discardableResult
    public func reclaimFreePages() async throws -> Int { try await engine.reclaimSpace() }

    public func close() { engine.close() }

    /// One write transaction on whichever engine holds the rows: the application test harness
    /// seeds and inspects through the Store, never by opening its database behind its back.
    package func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await engine.write(body)
    }

    /// One read on whichever engine holds the rows (see `write`).
    package func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await engine.read(body)
    }

    /// `read` on the calling thread, for a test's synchronous checks.
    package func readBlocking<T>(_ body: (any SQLConnection) throws -> T) throws -> T { try engine.readBlocking(body) }

    /// `write` on the calling thread, for a test's synchronous changes.
    package func writeBlocking<T>(_ body: (any SQLConnection) throws -> T) throws -> T { try engine.writeBlocking(body) }

    // MARK: - Without a running server

    /// The `migrate` command: applies pending migrations; returns those applied.
    public static func migrate(path: String) throws -> [(version: Int, name: String)] {
        let applied = isPostgres(path) ? try migratePostgres(path) : try StoreOpener.migrate(path: path)
        return applied.map { ($0.version, $0.name) }
    }

    /// What `check-config` says about a database: it opens, takes a write lock, and holds a
    /// schema this build understands.
    public static func inspect(path: String) -> (ok: Bool, detail: String) {
        if isPostgres(path) { return inspectPostgres(path) }
        return inspectSQLite(path)
    }
}
