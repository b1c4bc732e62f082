import Glibc
import PostgreSQL

/// Why `copy-database` refused or failed; nothing was committed to the target.
public struct CopyFailure: Error, CustomStringConvertible, Sendable {
    public let description: String
}

extension Store {
    /// The product's tables, parents before the tables that reference them.
    static let copiedTables = [
        "server_state", "users", "team_transfers", "sessions", "apple_tokens", "pending_profiles", "used_identity_tokens", "issued_nonces",
        "notifications", "revocations", "web_sign_ins", "webhook_events", "signing_keys", "app_return_codes",
        "password_credentials", "password_reset_codes", "password_attempts", "email_verification_codes", "email_code_sends",
    ]

    /// `copy-database`: every row of the SQLite database at `path` into the PostgreSQL
    /// database at `url`, in one transaction, after migrating the target. Refuses a target
    /// that holds any row. Rows are copied as they are: sealed tokens stay sealed (with the same
    /// `data_key`), hashes stay hashes. Returns the rows copied per table.
    public static func copy(fromSQLite path: String, toPostgres url: String) throws -> [(table: String, rows: Int)] {
        guard !isPostgres(path) else { throw CopyFailure(description: "database is already PostgreSQL; copy-database copies a SQLite file") }
        guard isPostgres(url) else { throw CopyFailure(description: "--to must be a postgres:// or postgresql:// URL") }
        guard access(path, F_OK) == 0 else { throw CopyFailure(description: "no SQLite database at \(path)") }
        let source = try SQLiteEngine.open(path: path, readers: 1)
        defer { source.close() }
        let target = try PostgresEngine.translatingErrors { try PostgresConnection(url, applicationName: "siwa-server copy-database") }
        defer { target.close() }
        try PostgresSchema.migrate(target)
        for table in copiedTables {
            if try target.queryOne("SELECT 1 FROM \(table) LIMIT 1") != nil {
                throw CopyFailure(description: "the target is not empty (table \(table) has rows); copy-database copies into an empty database only")
            }
        }
        return try target.transaction { target in
            var copied: [(String, Int)] = []
            for table in copiedTables {
                let rows = try source.readBlocking { try $0.query("SELECT * FROM \(table)") }
                if let first = rows.first {
                    let columns = first.columnNames
                    let placeholders = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
                    let insert = "INSERT INTO \(table)(\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
                    for row in rows {
                        try target.run(insert, (0..<row.count).map { row[$0] })
                    }
                }
                copied.append((table, rows.count))
            }
            // Copied ids were given explicitly: the identity continues after the largest.
            for (table, column) in [("revocations", "id"), ("webhook_events", "seq")] {
                try target.execute(
                    "SELECT setval(pg_get_serial_sequence('\(table)', '\(column)'), COALESCE((SELECT MAX(\(column)) FROM \(table)), 0) + 1, false)")
            }
            return copied
        }
    }
}
