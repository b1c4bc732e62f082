/// One value bound to a parameter or read from a column, by either database driver.
///
/// SQLite has no boolean type: it binds `boolean` as the integer 0 or 1 and never reads one
/// back. PostgreSQL binds and reads all six (see `PostgresValue`'s notes in that module).
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case boolean(Bool)
}

extension SQLValue {
    public init(_ value: Int) {
        self = .integer(Int64(value))
    }

    /// A flag as the integer 0 or 1: the schema stores flags in integer columns on both
    /// engines. (`.boolean` binds PostgreSQL's boolean type.)
    public init(_ value: Bool) {
        self = .integer(value ? 1 : 0)
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension SQLValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension SQLValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension SQLValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) {
        self = .real(value)
    }
}

extension SQLValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self = .text(value)
    }
}

extension SQLValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) {
        self = .boolean(value)
    }
}
