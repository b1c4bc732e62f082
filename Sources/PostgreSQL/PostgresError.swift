import CLibPQ

/// An error reported by PostgreSQL, by libpq, or by this layer, always with a SQLSTATE code
/// (libpq's own failures get the code PostgreSQL would use for them, so callers test one thing).
///
/// Holds the server's primary message and the SQL, never the connection string, a password,
/// bound parameter values, or the server's DETAIL line, which quotes row values
/// ("Key (email)=(…) already exists").
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The SQLSTATE, such as "23505".
    public let code: String
    public let message: String
    public let sql: String?
    /// The constraint a violation names (for telling two unique keys of one table apart).
    public let constraint: String?

    public init(code: String, message: String, sql: String? = nil, constraint: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.constraint = constraint
    }

    /// A unique or primary key constraint refused the row.
    public var isUniqueViolation: Bool { code == "23505" }
    public var isForeignKeyViolation: Bool { code == "23503" }
    /// The transaction lost a race (serializable isolation, or a deadlock) and may be retried whole.
    public var isSerializationFailure: Bool { code == "40001" || code == "40P01" }

    /// The database cannot be reached, or went away: connection exceptions (class 08, except
    /// 08P01, a protocol violation on a live connection), a server shutting down, starting up or
    /// ending this connection (57P01–57P03). Callers answer 503 `database_unavailable`.
    public var isConnectionFailure: Bool {
        (code.hasPrefix("08") && code != "08P01") || code == "57P01" || code == "57P02" || code == "57P03"
    }

    /// Every pool connection was busy and the wait queue was full: overload, also a 503.
    public var isPoolExhausted: Bool { code == Self.poolExhaustedCode }

    /// A column held another type than the caller asked for (see `PostgresRow`).
    public var isMismatch: Bool { code == "42804" }

    public var description: String {
        var text = "PostgreSQL error \(code): \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }

    // MARK: - Codes this layer uses

    /// sqlclient_unable_to_establish_sqlconnection: a connection attempt failed.
    static let connectFailedCode = "08001"
    /// connection_does_not_exist: used after `close()`.
    static let closedCode = "08003"
    /// connection_failure: the connection broke during a call.
    static let connectionLostCode = "08006"
    /// too_many_connections, from the pool's side.
    static let poolExhaustedCode = "53300"

    static func mismatch(_ message: String) -> PostgresError {
        PostgresError(code: "42804", message: message)
    }

    static func closed(_ what: String) -> PostgresError {
        PostgresError(code: closedCode, message: "\(what) is closed")
    }

    // MARK: - From libpq

    /// The error carried by a failed result. Falls back on the connection's message when the
    /// result has no fields (libpq's own failures), and on `connectionLostCode` when it has no
    /// SQLSTATE and the connection is gone.
    init(result: OpaquePointer?, connection: OpaquePointer, sql: String?) {
        let state = result.flatMap { Self.field($0, "C") }
        let primary = result.flatMap { Self.field($0, "M") }
        let message = primary ?? Self.firstLine(PQerrorMessage(connection)) ?? "unknown libpq error"
        let code = state ?? (PQstatus(connection) == CONNECTION_OK ? "XX000" : Self.connectionLostCode)
        self.init(code: code, message: message, sql: sql, constraint: result.flatMap { Self.field($0, "n") })
    }

    /// PG_DIAG_* codes are character literals in postgres_ext.h, which Swift does not import.
    private static func field(_ result: OpaquePointer, _ code: Unicode.Scalar) -> String? {
        PQresultErrorField(result, Int32(code.value)).map { String(cString: $0) }
    }

    /// libpq's messages end in a newline and sometimes add an indented hint line.
    static func firstLine(_ text: UnsafePointer<CChar>?) -> String? {
        guard let text else { return nil }
        let line = String(cString: text).split(separator: "\n").first.map(String.init)
        guard let line else { return nil }
        let trimmed = String(line.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        return trimmed.isEmpty ? nil : trimmed
    }
}
