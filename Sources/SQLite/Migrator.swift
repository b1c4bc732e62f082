/// Applies pending migrations in version order, each in its own `BEGIN IMMEDIATE` transaction
/// together with its `schema_migrations` row, so a crash leaves either both or neither.
///
/// Safe when several processes migrate the same file at once: the applied versions are read
/// again inside each IMMEDIATE transaction (which holds the write lock), so a migration another
/// process applied meanwhile is skipped, never run twice.
public struct Migrator: Sendable {
    public let migrations: [Migration]

    public init(_ migrations: [Migration]) {
        self.migrations = migrations
    }

    /// Returns the migrations applied by this call (empty when the schema was current).
    @discardableResult
    public func migrate(_ database: Database) throws -> [Migration] {
        try migrate(database, beforeApplying: { _ in })
    }

    /// The same on a connection this thread owns.
    @discardableResult
    public func migrate(_ connection: Connection) throws -> [Migration] {
        try migrate(connection, beforeApplying: { _ in })
    }

    /// `beforeApplying` is a test seam: it runs before each pending migration's transaction,
    /// where another process could apply that migration first.
    func migrate(_ database: Database, beforeApplying: (Migration) -> Void) throws -> [Migration] {
        try database.writeWithoutTransaction { try migrate($0, beforeApplying: beforeApplying) }
    }

    func migrate(_ connection: Connection, beforeApplying: (Migration) -> Void) throws -> [Migration] {
        let known = try sortedMigrations()
        let pending = try connection.transaction(.immediate) { connection in
            let recorded = try Self.recorded(connection)
            try Self.check(recorded, against: known)
            return known.filter { recorded[$0.version] == nil }
        }
        var applied: [Migration] = []
        for migration in pending {
            beforeApplying(migration)
            let didApply = try connection.transaction(.immediate) { connection in
                let recorded = try Self.recorded(connection)
                try Self.check(recorded, against: known)
                guard recorded[migration.version] == nil else { return false }
                try connection.execute(migration.sql)
                try connection.run(
                    """
                    INSERT INTO schema_migrations(version, name, applied_at)
                    VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                    """,
                    [.integer(Int64(migration.version)), .text(migration.name)]
                )
                return true
            }
            if didApply { applied.append(migration) }
        }
        return applied
    }

    private func sortedMigrations() throws -> [Migration] {
        let sorted = migrations.sorted { $0.version < $1.version }
        for (index, migration) in sorted.enumerated() {
            if migration.version <= 0 {
                throw MigrationError.invalidMigrations("version \(migration.version) is not positive")
            }
            if index > 0, sorted[index - 1].version == migration.version {
                throw MigrationError.invalidMigrations("version \(migration.version) appears twice")
            }
        }
        return sorted
    }

    /// Version → name of what the database has applied. Creates the table on first use.
    private static func recorded(_ connection: Connection) throws -> [Int: String] {
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations(
                version INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                applied_at TEXT NOT NULL
            )
            """
        )
        var recorded: [Int: String] = [:]
        for row in try connection.query("SELECT version, name FROM schema_migrations") {
            recorded[try row.int(0)] = try row.string(1)
        }
        return recorded
    }

    /// Refuses a database migrated by a newer build or with other names for known versions
    /// (the PostgreSQL migrator shares the rule). `known` is sorted by version.
    public static func check(_ recorded: [Int: String], against known: [Migration]) throws {
        try MigrationError.check(recorded, against: known)
    }
}
