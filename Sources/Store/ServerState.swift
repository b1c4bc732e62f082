import SQLRow

/// Small server-wide values kept across restarts, by key (table `server_state`).
public struct ServerState: Sendable {
    private let engine: any StoreEngine

    init(engine: any StoreEngine) {
        self.engine = engine
    }

    /// Blocking: read at start, before the server takes requests.
    public func get(_ key: String) throws -> [UInt8]? {
        try engine.readBlocking { try Self.get(key, in: $0) }
    }

    /// When `key` was last set, as ISO 8601 UTC text (for example to judge a cached copy's age).
    public func updatedAt(_ key: String) async throws -> String? {
        try await engine.read { connection in
            try connection.queryOne("SELECT updated_at FROM server_state WHERE key = ?", [.text(key)])?.string(0)
        }
    }

    /// Stores `value` under `key`, replacing any previous value; returns once committed.
    public func set(_ key: String, _ value: [UInt8]) async throws {
        try await engine.write { try Self.set(key, value, in: $0) }
    }

    /// `set` inside the caller's transaction.
    static func set(_ key: String, _ value: [UInt8], in connection: any SQLConnection) throws {
        let now =
            switch connection.dialect {
            case .sqlite: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
            case .postgres: #"to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#
            }
        try connection.run(
            """
            INSERT INTO server_state(key, value, updated_at)
            VALUES (?, ?, \(now))
            ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
            """,
            [.text(key), .blob(value)]
        )
    }

    /// `get` inside the caller's transaction.
    static func get(_ key: String, in connection: any SQLConnection) throws -> [UInt8]? {
        try connection.queryOne("SELECT value FROM server_state WHERE key = ?", [.text(key)])?.blob(0)
    }
}
