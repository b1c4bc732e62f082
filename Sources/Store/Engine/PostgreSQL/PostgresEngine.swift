import PostgreSQL
import Synchronization

/// The engine of several instances: a pool of libpq connections on worker threads (libpq
/// blocks), each call one transaction. A database that cannot be reached is `StoreError.unavailable`.
struct PostgresEngine: StoreEngine {
    let pool: PostgresPool
    let url: String
    /// Hears the database's change notifications for the session cache.
    let listener: PostgresListener?
    /// The session cache, told of each write's commit so that the write's changes are never
    /// served from memory once it has returned.
    let cache: NotifiedSessionCache?

    var dialect: SQLDialect { .postgres }

    var sessionCaching: any SessionCaching { cache ?? UncachedSessions() }

    /// One connection to the database at `location`, its schema brought up to date, without a
    /// session cache: for the operators' commands.
    static func open(_ location: String, applicationName: String) throws -> PostgresEngine {
        try Store.migratePostgres(location)
        let pool = try translatingErrors { try PostgresPool(location, size: 1, applicationName: applicationName) }
        return PostgresEngine(pool: pool, url: location, listener: nil, cache: nil)
    }

    /// The key of a transaction-scoped advisory lock (`pg_advisory_xact_lock`) named `name`.
    static func advisoryLockKey(_ name: String) -> Int64 { PostgresConnection.advisoryLockKey(name) }

    @discardableResult
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        guard let cache else {
            return try await Self.translatingErrors { try await pool.transaction { try body(PostgresSession($0)) } }
        }
        let marked = CommitMarking()
        do {
            let result = try await Self.translatingErrors {
                try await pool.transaction(.readCommitted, { try body(PostgresSession($0)) }, notifyingAtCommit: {
                    let marker = cache.markerForCommit()
                    marked.marker = marker
                    return marker.map {
                        .init(channel: NotifiedSessionCache.channel, payload: $0.payload, condition: NotifiedSessionCache.markerCondition)
                    }
                }, notified: { sent in
                    // Before the write returns. A marker not sent (the write changed nothing
                    // announced) is not waited for.
                    if sent, let marker = marked.marker { cache.committed(with: marker) }
                })
            }
            // Nothing was cached when it committed: reads that raced the commit go instead.
            if marked.marker == nil { cache.forgetAll() }
            return result
        } catch StoreError.unavailable(let reason) {
            // The connection may have failed after COMMIT was applied: what it changed may be
            // cached, and its marker may never be heard.
            cache.forgetAll()
            throw StoreError.unavailable(reason: reason)
        } catch {
            // The body's own refusal commits nothing and marks nothing. A COMMIT that failed
            // most likely changed nothing either, but its error cannot prove it was not applied.
            if marked.marker != nil { cache.forgetAll() }
            throw error
        }
    }

    /// The marker made for a write's COMMIT, if any: set on the pool's worker, read after it.
    private final class CommitMarking: Sendable {
        private let value = Mutex<NotifiedSessionCache.CommitMarker?>(nil)
        var marker: NotifiedSessionCache.CommitMarker? {
            get { value.withLock { $0 } }
            set { value.withLock { $0 = newValue } }
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await Self.translatingErrors {
            try await pool.withConnection { try body(PostgresSession($0)) }
        }
    }

    /// A connection of its own: the pool has no blocking face, and this runs once at start.
    func readBlocking<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        let connection = try Self.translatingErrors { try PostgresConnection(url) }
        defer { connection.close() }
        return try Self.translatingErrors { try body(PostgresSession(connection)) }
    }

    func writeBlocking<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        let connection = try Self.translatingErrors { try PostgresConnection(url) }
        defer { connection.close() }
        return try Self.translatingErrors { try connection.transaction { try body(PostgresSession($0)) } }
    }

    func ping() async -> Bool { await pool.ping() }

    // PostgreSQL's autovacuum keeps space in use; nothing to do here.
    func reclaimSpace() async throws -> Int { 0 }

    func close() {
        listener?.close()
        pool.close()
    }

    /// PostgreSQL's errors as the Store's: a connection that failed or a pool with none free
    /// is an outage.
    static func translatingErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresError {
            throw translated(error)
        }
    }

    static func translatingErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            throw translated(error)
        }
    }

    static func translated(_ error: PostgresError) -> StoreError {
        if error.isPoolExhausted { return .unavailable(reason: "every database connection is busy") }
        if error.isConnectionFailure { return .unavailable(reason: "the database cannot be reached") }
        if error.isUniqueViolation { return .uniqueViolation(constraint: error.constraint ?? "") }
        return .invariant(error.description)
    }
}
