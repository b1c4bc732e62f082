import CSQLite

/// One result row. Values are read by column index or by name; the typed accessors throw a
/// `SQLITE_MISMATCH` `SQLiteError` when the stored value has another type, so a schema drift
/// surfaces as an error rather than as a silent zero or empty string.
public struct Row: Sendable {
    /// Shared by every row of a statement: names are looked up, not copied per row.
    let columns: RowColumns
    /// A slice of the query's one flat value buffer (one allocation for the whole result).
    let values: ArraySlice<SQLiteValue>

    init(columns: RowColumns, values: ArraySlice<SQLiteValue>) {
        self.columns = columns
        self.values = values
    }

    public var count: Int { values.count }
    public var columnNames: [String] { columns.names }

    public subscript(index: Int) -> SQLiteValue {
        values[values.startIndex + index]
    }

    /// `nil` when the row has no column of that name.
    public subscript(name: String) -> SQLiteValue? {
        columns.index(of: name).map { self[$0] }
    }

    public func value(_ index: Int) throws -> SQLiteValue {
        guard index >= 0, index < values.count else {
            throw SQLiteError(code: SQLITE_RANGE, message: "no column \(index) in a row of \(values.count)")
        }
        return self[index]
    }

    public func value(_ name: String) throws -> SQLiteValue {
        guard let index = columns.index(of: name) else {
            throw SQLiteError(code: SQLITE_RANGE, message: "no column named '\(name)'")
        }
        return self[index]
    }
}

// MARK: - Typed accessors

extension Row {
    public func int(_ index: Int) throws -> Int { try Self.int(value(index), index) }
    public func int(_ name: String) throws -> Int { try Self.int(value(name), name) }
    public func optionalInt(_ index: Int) throws -> Int? { try optional(value(index)) { try Self.int($0, index) } }
    public func optionalInt(_ name: String) throws -> Int? { try optional(value(name)) { try Self.int($0, name) } }

    public func int64(_ index: Int) throws -> Int64 { try Self.int64(value(index), index) }
    public func int64(_ name: String) throws -> Int64 { try Self.int64(value(name), name) }
    public func optionalInt64(_ index: Int) throws -> Int64? { try optional(value(index)) { try Self.int64($0, index) } }
    public func optionalInt64(_ name: String) throws -> Int64? { try optional(value(name)) { try Self.int64($0, name) } }

    public func double(_ index: Int) throws -> Double { try Self.double(value(index), index) }
    public func double(_ name: String) throws -> Double { try Self.double(value(name), name) }
    public func optionalDouble(_ index: Int) throws -> Double? { try optional(value(index)) { try Self.double($0, index) } }
    public func optionalDouble(_ name: String) throws -> Double? { try optional(value(name)) { try Self.double($0, name) } }

    public func string(_ index: Int) throws -> String { try Self.string(value(index), index) }
    public func string(_ name: String) throws -> String { try Self.string(value(name), name) }
    public func optionalString(_ index: Int) throws -> String? { try optional(value(index)) { try Self.string($0, index) } }
    public func optionalString(_ name: String) throws -> String? { try optional(value(name)) { try Self.string($0, name) } }

    public func blob(_ index: Int) throws -> [UInt8] { try Self.blob(value(index), index) }
    public func blob(_ name: String) throws -> [UInt8] { try Self.blob(value(name), name) }
    public func optionalBlob(_ index: Int) throws -> [UInt8]? { try optional(value(index)) { try Self.blob($0, index) } }
    public func optionalBlob(_ name: String) throws -> [UInt8]? { try optional(value(name)) { try Self.blob($0, name) } }

    private func optional<T>(_ value: SQLiteValue, _ convert: (SQLiteValue) throws -> T) throws -> T? {
        value.isNull ? nil : try convert(value)
    }

    private static func int64(_ value: SQLiteValue, _ column: some CustomStringConvertible) throws -> Int64 {
        guard case .integer(let number) = value else { throw mismatch(value, "integer", column) }
        return number
    }

    private static func int(_ value: SQLiteValue, _ column: some CustomStringConvertible) throws -> Int {
        let number = try int64(value, column)
        guard let result = Int(exactly: number) else { throw mismatch(value, "Int", column) }
        return result
    }

    /// Integers are accepted too: SQLite stores a REAL column's whole numbers as integers.
    private static func double(_ value: SQLiteValue, _ column: some CustomStringConvertible) throws -> Double {
        switch value {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        default: throw mismatch(value, "real", column)
        }
    }

    private static func string(_ value: SQLiteValue, _ column: some CustomStringConvertible) throws -> String {
        guard case .text(let text) = value else { throw mismatch(value, "text", column) }
        return text
    }

    private static func blob(_ value: SQLiteValue, _ column: some CustomStringConvertible) throws -> [UInt8] {
        guard case .blob(let bytes) = value else { throw mismatch(value, "blob", column) }
        return bytes
    }

    /// Names the type found, never the value: it may be a secret.
    private static func mismatch(_ value: SQLiteValue, _ expected: String, _ column: some CustomStringConvertible) -> SQLiteError {
        let found = switch value {
        case .null: "NULL"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
        return SQLiteError(code: SQLITE_MISMATCH, message: "column \(column) is \(found), expected \(expected)")
    }
}

// MARK: - Rows from elsewhere

extension Row {
    /// Rows of a result read by another engine, in this type, so code written against `Row`
    /// reads both (the Store's PostgreSQL engine). One shared column map for the whole result.
    public static func rows(columnNames: [String], values: [[SQLiteValue]]) -> [Row] {
        let columns = RowColumns(names: columnNames)
        return values.map { Row(columns: columns, values: $0[...]) }
    }
}
