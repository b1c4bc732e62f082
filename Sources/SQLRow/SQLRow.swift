/// One result row of either driver (SQLite's `Row`, PostgreSQL's `PostgresRow`), so the code
/// that reads rows is written once. Values are read by column index or by name; the typed
/// accessors throw an `SQLRowError` when the value has another type, so a schema drift surfaces
/// as an error rather than as a silent zero or empty string.
public struct SQLRow: Sendable {
    /// Shared by every row of a result: names are looked up, not copied per row.
    package let columns: SQLColumns
    /// A slice of the result's one flat value buffer (one allocation for the whole result).
    package let values: ArraySlice<SQLValue>

    package init(columns: SQLColumns, values: ArraySlice<SQLValue>) {
        self.columns = columns
        self.values = values
    }

    public var count: Int { values.count }
    public var columnNames: [String] { columns.names }

    public subscript(index: Int) -> SQLValue {
        values[values.startIndex + index]
    }

    /// `nil` when the row has no column of that name.
    public subscript(name: String) -> SQLValue? {
        columns.index(of: name).map { self[$0] }
    }

    public func value(_ index: Int) throws -> SQLValue {
        guard index >= 0, index < values.count else {
            throw SQLRowError(kind: .noSuchColumn, message: "no column \(index) in a row of \(values.count)")
        }
        return self[index]
    }

    public func value(_ name: String) throws -> SQLValue {
        guard let index = columns.index(of: name) else {
            throw SQLRowError(kind: .noSuchColumn, message: "no column named '\(name)'")
        }
        return self[index]
    }
}

// MARK: - Typed accessors

extension SQLRow {
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

    public func bool(_ index: Int) throws -> Bool { try Self.bool(value(index), index) }
    public func bool(_ name: String) throws -> Bool { try Self.bool(value(name), name) }
    public func optionalBool(_ index: Int) throws -> Bool? { try optional(value(index)) { try Self.bool($0, index) } }
    public func optionalBool(_ name: String) throws -> Bool? { try optional(value(name)) { try Self.bool($0, name) } }

    private func optional<T>(_ value: SQLValue, _ convert: (SQLValue) throws -> T) throws -> T? {
        value.isNull ? nil : try convert(value)
    }

    private static func int64(_ value: SQLValue, _ column: some CustomStringConvertible) throws -> Int64 {
        guard case .integer(let number) = value else { throw mismatch(value, "integer", column) }
        return number
    }

    private static func int(_ value: SQLValue, _ column: some CustomStringConvertible) throws -> Int {
        let number = try int64(value, column)
        guard let result = Int(exactly: number) else { throw mismatch(value, "Int", column) }
        return result
    }

    /// Integers are accepted too: SQLite stores a REAL column's whole numbers as integers, and a
    /// whole PostgreSQL `numeric` reads as an integer.
    private static func double(_ value: SQLValue, _ column: some CustomStringConvertible) throws -> Double {
        switch value {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        default: throw mismatch(value, "real", column)
        }
    }

    private static func string(_ value: SQLValue, _ column: some CustomStringConvertible) throws -> String {
        guard case .text(let text) = value else { throw mismatch(value, "text", column) }
        return text
    }

    private static func blob(_ value: SQLValue, _ column: some CustomStringConvertible) throws -> [UInt8] {
        guard case .blob(let bytes) = value else { throw mismatch(value, "blob", column) }
        return bytes
    }

    /// PostgreSQL's boolean, or the integer 0 or 1 that SQLite keeps flags as.
    private static func bool(_ value: SQLValue, _ column: some CustomStringConvertible) throws -> Bool {
        switch value {
        case .boolean(let flag): return flag
        case .integer(0): return false
        case .integer(1): return true
        default: throw mismatch(value, "boolean", column)
        }
    }

    /// Names the type found, never the value: it may be a secret.
    private static func mismatch(_ value: SQLValue, _ expected: String, _ column: some CustomStringConvertible) -> SQLRowError {
        let found = switch value {
        case .null: "NULL"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        case .boolean: "boolean"
        }
        return SQLRowError(kind: .mismatch, message: "column \(column) is \(found), expected \(expected)")
    }
}

// MARK: - Rows built elsewhere

extension SQLRow {
    /// Rows with one shared column map, for results assembled outside a driver.
    public static func rows(columnNames: [String], values: [[SQLValue]]) -> [SQLRow] {
        let columns = SQLColumns(names: columnNames)
        return values.map { SQLRow(columns: columns, values: $0[...]) }
    }
}
