import CSQLite

/// A prepared statement, owned by one connection's cache and reused for every call with the
/// same SQL text.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    private let connection: OpaquePointer
    private let parameterCount: Int
    /// Column names cached until SQLite re-prepares the statement (after a schema change a
    /// `SELECT *` may gain or lose columns).
    private var columns: SQLColumns?
    private var columnsPreparation: Int32 = -1

    init(connection: OpaquePointer, sql: String) throws {
        var handle: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let flags = UInt32(SQLITE_PREPARE_PERSISTENT)
        let (result, rest) = sql.withCString { text in
            let result = sqlite3_prepare_v3(connection, text, -1, flags, &handle, &tail)
            return (result, tail.map { String(cString: $0) } ?? "")
        }
        guard result == SQLITE_OK else {
            sqlite3_finalize(handle)
            throw SQLiteError(resultCode: result, connection: connection, sql: sql)
        }
        guard let handle else {
            throw SQLiteError.misuse("no SQL statement to prepare", sql: sql)
        }
        // Only the first statement would run: refuse rather than silently ignore the others.
        guard rest.allSatisfy({ $0.isWhitespace || $0 == ";" }) else {
            sqlite3_finalize(handle)
            throw SQLiteError.misuse("several statements in one call; use execute(_:)", sql: sql)
        }
        self.handle = handle
        self.sql = sql
        self.connection = connection
        self.parameterCount = Int(sqlite3_bind_parameter_count(handle))
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Steps to completion, ignoring any rows.
    func run(_ parameters: [SQLiteValue]) throws {
        try withBindings(parameters) {
            while true {
                let result = sqlite3_step(handle)
                if result == SQLITE_DONE { return }
                if result != SQLITE_ROW { throw error(result) }
            }
        }
    }

    /// Every row, with all values in one flat buffer that the rows slice.
    func query(_ parameters: [SQLiteValue], limit: Int = .max) throws -> [Row] {
        try withBindings(parameters) {
            var values: [SQLiteValue] = []
            var rowCount = 0
            var width = 0
            while rowCount < limit {
                let result = sqlite3_step(handle)
                if result == SQLITE_DONE { break }
                guard result == SQLITE_ROW else { throw error(result) }
                // Read after the first step: a re-prepare during it may change the columns.
                if rowCount == 0 { width = Int(sqlite3_column_count(handle)) }
                for column in 0..<Int32(width) {
                    values.append(value(at: column))
                }
                rowCount += 1
            }
            guard rowCount > 0 else { return [] }
            let columns = rowColumns()
            var rows: [Row] = []
            rows.reserveCapacity(rowCount)
            for row in 0..<rowCount {
                rows.append(Row(columns: columns, values: values[row * width ..< (row + 1) * width]))
            }
            return rows
        }
    }

    private func error(_ result: Int32) -> SQLiteError {
        SQLiteError(resultCode: result, connection: connection, sql: sql)
    }

    private func value(at column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            // Text first, then bytes: the order SQLite documents so the length matches the pointer.
            guard let text = sqlite3_column_text(handle, column) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let bytes = sqlite3_column_blob(handle, column)
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let bytes, count > 0 else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    private func rowColumns() -> SQLColumns {
        let preparation = sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
        if let columns, preparation == columnsPreparation { return columns }
        let count = sqlite3_column_count(handle)
        let names = (0..<count).map { column in
            sqlite3_column_name(handle, column).map { String(cString: $0) } ?? ""
        }
        let columns = SQLColumns(names: names)
        self.columns = columns
        columnsPreparation = preparation
        return columns
    }

    // MARK: - Binding

    /// Binds `parameters`, runs `body`, then resets the statement and clears its bindings, so a
    /// cached statement never holds a caller's values (or pointers to them) between calls.
    private func withBindings<R>(_ parameters: [SQLiteValue], _ body: () throws -> R) throws -> R {
        guard parameters.count == parameterCount else {
            throw SQLiteError(
                code: SQLITE_RANGE,
                message: "statement expects \(parameterCount) parameters, got \(parameters.count)",
                sql: sql
            )
        }
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        return try bind(parameters, from: 0) {
            // Clear inside the innermost scope: text and blob bindings point into the callers'
            // buffers (no copy), which are only valid until these closures return.
            defer {
                sqlite3_reset(handle)
                sqlite3_clear_bindings(handle)
            }
            return try body()
        }
    }

    /// Binds one parameter and recurses into the next inside its buffer's scope, so text and
    /// blobs are bound with SQLITE_STATIC (no copy) yet never outlive their storage.
    private func bind<R>(_ parameters: [SQLiteValue], from index: Int, _ body: () throws -> R) throws -> R {
        guard index < parameters.count else { return try body() }
        let position = Int32(index + 1)
        let result: Int32
        switch parameters[index] {
        case .null:
            result = sqlite3_bind_null(handle, position)
        case .integer(let number):
            result = sqlite3_bind_int64(handle, position, number)
        case .boolean(let flag):
            // SQLite has no boolean: flags are the integers 0 and 1.
            result = sqlite3_bind_int64(handle, position, flag ? 1 : 0)
        case .real(let number):
            result = sqlite3_bind_double(handle, position, number)
        case .text(var text):
            return try text.withUTF8 { bytes in
                // An empty buffer may have no address, and a NULL pointer would bind SQL NULL.
                let result = bytes.isEmpty
                    ? sqlite3_bind_text(handle, position, "", 0, siwa_sqlite_transient())
                    : sqlite3_bind_text(handle, position, bytes.baseAddress, try length(bytes.count), nil)
                try check(result)
                return try bind(parameters, from: index + 1, body)
            }
        case .blob(let bytes):
            if bytes.isEmpty {
                // A zero-length blob, not NULL.
                result = sqlite3_bind_zeroblob(handle, position, 0)
                break
            }
            return try bytes.withUnsafeBytes { buffer in
                try check(sqlite3_bind_blob(handle, position, buffer.baseAddress, length(buffer.count), nil))
                return try bind(parameters, from: index + 1, body)
            }
        }
        try check(result)
        return try bind(parameters, from: index + 1, body)
    }

    private func length(_ count: Int) throws -> Int32 {
        guard let length = Int32(exactly: count) else {
            throw SQLiteError(code: SQLITE_TOOBIG, message: "a bound value of \(count) bytes is too large", sql: sql)
        }
        return length
    }

    private func check(_ result: Int32) throws {
        if result != SQLITE_OK { throw error(result) }
    }
}
