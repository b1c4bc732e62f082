import CSQLite

/// An error reported by SQLite (or by this layer, using SQLite's result codes), with the SQL
/// that caused it. Bound parameter values are never included: they may hold secrets.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, ...).
    public let code: Int32
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, ...); equals `code` when there is none.
    public let extendedCode: Int32
    /// `sqlite3_errmsg` at the time of the failure.
    public let message: String
    public let sql: String?

    public init(code: Int32, extendedCode: Int32? = nil, message: String, sql: String? = nil) {
        self.code = code & 0xFF
        self.extendedCode = extendedCode ?? code
        self.message = message
        self.sql = sql
    }

    /// Reads the current error of a connection right after a call returned `resultCode`.
    init(resultCode: Int32, connection: OpaquePointer?, sql: String?) {
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(resultCode))
        self.init(code: resultCode, extendedCode: resultCode, message: message, sql: sql)
    }

    /// Another connection holds the lock longer than the busy timeout.
    public var isBusy: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }
    public var isConstraint: Bool { code == SQLITE_CONSTRAINT }
    public var isUniqueViolation: Bool {
        extendedCode == Self.constraintUnique || extendedCode == Self.constraintPrimaryKey
    }
    public var isForeignKeyViolation: Bool { extendedCode == Self.constraintForeignKey }

    // Extended codes are function-like macros in sqlite3.h, which Swift does not import.
    static let constraintForeignKey = SQLITE_CONSTRAINT | (3 << 8)
    static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
    static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)
    static let ioErrorFsync = SQLITE_IOERR | (4 << 8)
    /// A sync of the WAL failed: the database takes no more writes until the process restarts.
    public var isFailedSync: Bool { extendedCode == Self.ioErrorFsync }
    /// A value had another type than the caller asked for (see `Row`).
    public var isMismatch: Bool { code == SQLITE_MISMATCH }
    /// The database was used after `close()`, or the API was used in a way it does not allow.
    public var isMisuse: Bool { code == SQLITE_MISUSE }

    public var description: String {
        var text = "SQLite error \(code)"
        if extendedCode != code { text += "/\(extendedCode)" }
        text += ": \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }

    static func misuse(_ message: String, sql: String? = nil) -> SQLiteError {
        SQLiteError(code: SQLITE_MISUSE, message: message, sql: sql)
    }

    static func closed(_ path: String) -> SQLiteError {
        misuse("database \(path) is closed")
    }
}
