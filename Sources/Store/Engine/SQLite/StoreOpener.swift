import SQLite

/// Opens the product database with its schema brought up to date.
public enum StoreOpener {
    /// Opens the database at `path` (creating it and its folder) and applies pending
    /// migrations. Refuses a database migrated by a newer build.
    public static func open(path: String, readers: Int = 4, busyTimeout: Duration = Connection.defaultBusyTimeout) throws -> Database {
        // Sessions and users are tracked so authenticated requests can be served from memory.
        let database = try Database(path: path, readers: readers, trackedTables: ["sessions", "users"], busyTimeout: busyTimeout)
        do {
            try FreePages.enableReclaiming(database)
            try Migrator(Schema.migrations).migrate(database)
        } catch {
            database.close()
            throw error
        }
        return database
    }

    /// The `migrate` command: applies pending migrations and closes the database. Returns what
    /// it applied (empty when the schema was current).
    @discardableResult
    public static func migrate(path: String) throws -> [Migration] {
        let database = try Database(path: path, readers: 1)
        defer { database.close() }
        try FreePages.enableReclaiming(database)
        return try Migrator(Schema.migrations).migrate(database)
    }
}
