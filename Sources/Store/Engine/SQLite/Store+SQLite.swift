import SQLite

extension Store {
    /// Opens the database at `path` (creating it and its folder) with its schema brought up
    /// to date; refuses a database migrated by a newer build. `dataKey` gives the key that seals
    /// Apple's tokens, asked once the database (and its folder) exists. A write waits up to
    /// `busyTimeout` for a lock another process holds, then fails with `StoreError.unavailable`.
    public convenience init(
        path: String, readers: Int = 4, busyTimeout: Duration = Connection.defaultBusyTimeout, events: WebhookEventRenderer? = nil,
        mail: MailSettings? = nil, dataKey: () throws -> [UInt8]
    ) throws {
        let database = try StoreOpener.open(path: path, readers: readers, busyTimeout: busyTimeout)
        do {
            try self.init(
                engine: SQLiteEngine(database: database), events: events, mail: mail,
                dataKey: dataKey())
        } catch {
            database.close()
            throw error
        }
    }

    static func openSQLite(
        _ path: String, readers: Int, busyTimeout: Duration?, events: WebhookEventRenderer?, mail: MailSettings?, dataKey: () throws -> [UInt8]
    ) throws -> Store {
        try Store(
            path: path, readers: readers, busyTimeout: busyTimeout ?? Connection.defaultBusyTimeout, events: events, mail: mail, dataKey: dataKey)
    }

    /// The SQLite database when that is the engine (tests count its commits).
    var database: Database? { (engine as? SQLiteEngine)?.database }

    /// `check-config` on SQLite: the file opens, takes a write lock, and holds a schema this
    /// build understands.
    static func inspectSQLite(_ path: String) -> (ok: Bool, detail: String) {
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
