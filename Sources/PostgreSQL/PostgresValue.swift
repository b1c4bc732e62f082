/// One value bound to a parameter or read from a column.
///
/// Bound as: `integer` a `bigint`, `real` a `double precision`, `boolean` a `boolean`, `blob`
/// a `bytea` (all in binary, so they arrive exactly), and `text` and `null` untyped, so the
/// server infers their type from where they stand (a `timestamptz`, `uuid` or `jsonb` column
/// takes text). Read back: integer types and `oid` as `integer`, `real`/`double precision` as
/// `real`, `numeric` as `integer` when whole and in range, else `real`; every other type in
/// PostgreSQL's text form.
public enum PostgresValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case boolean(Bool)
}

extension PostgresValue {
    public init(_ value: Int) {
        self = .integer(Int64(value))
    }

    public init(_ value: Bool) {
        self = .boolean(value)
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension PostgresValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension PostgresValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension PostgresValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) {
        self = .real(value)
    }
}

extension PostgresValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self = .text(value)
    }
}

extension PostgresValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) {
        self = .boolean(value)
    }
}
