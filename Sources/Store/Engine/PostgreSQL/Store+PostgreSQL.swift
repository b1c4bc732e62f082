import PostgreSQL

extension Store {
    /// PostgreSQL: the schema is migrated first, under an advisory lock, then a pool of
    /// `connections` serves every call, and a listener keeps the session cache true.
    static func openPostgres(
        _ location: String, connections: Int, events: WebhookEventRenderer?, mail: MailSettings?, dataKey: () throws -> [UInt8]
    ) throws -> Store {
        try migratePostgres(location)
        let pool = try PostgresEngine.translatingErrors { try PostgresPool(location, size: connections, applicationName: "siwa-server") }
        let cache = NotifiedSessionCache()
        let listener: PostgresListener
        do {
            listener = try PostgresListener(
                location, channels: [NotifiedSessionCache.channel], applicationName: "siwa-server cache",
                confirmEvery: NotifiedSessionCache.confirmationInterval, confirmWithin: NotifiedSessionCache.confirmationLimit
            ) { event in
                switch event {
                case .listening: cache.listenerConnected()
                case .notification(let notification): cache.invalidate(notification.payload)
                case .confirmed: cache.listenerConfirmed()
                case .disconnected: cache.listenerLost()
                }
            }
        } catch {
            pool.close()
            throw error
        }
        let engine = PostgresEngine(pool: pool, url: location, listener: listener, cache: cache)
        do {
            return try Store(engine: engine, events: events, mail: mail, dataKey: dataKey())
        } catch {
            engine.close()
            throw error
        }
    }

    @discardableResult
    static func migratePostgres(_ url: String) throws -> [Migration] {
        let connection = try PostgresEngine.translatingErrors { try PostgresConnection(url, applicationName: "siwa-server migrate") }
        defer { connection.close() }
        return try PostgresSchema.migrate(connection)
    }

    /// PostgreSQL: it answers, and its schema is one this build understands.
    static func inspectPostgres(_ url: String) -> (ok: Bool, detail: String) {
        do {
            let connection = try PostgresConnection(url, applicationName: "siwa-server check-config")
            defer { connection.close() }
            let exists = try connection.queryOne("SELECT to_regclass('schema_migrations') IS NOT NULL")?.bool(0) ?? false
            let version = exists ? try connection.queryOne("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")?.int(0) ?? 0 : 0
            if version > Schema.version {
                return (false, "PostgreSQL answers; schema version \(version) is newer than this build (\(Schema.version))")
            }
            return (true, "PostgreSQL \(connection.serverVersion / 10000) answers, schema version \(version) of \(Schema.version)")
        } catch {
            return (false, "PostgreSQL: \(error)")
        }
    }
}
