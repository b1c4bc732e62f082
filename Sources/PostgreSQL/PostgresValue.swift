@_exported import SQLRow

/// The shared value and row types (module SQLRow), as this driver binds and reads them: bound,
/// `integer` is a `bigint`, `real` a `double precision`, `boolean` a `boolean`, `blob` a
/// `bytea` (all in binary, so they arrive exactly), and `text` and `null` untyped, so the server
/// infers their type from where they stand (a `timestamptz`, `uuid` or `jsonb` column takes
/// text). Read back: integer types and `oid` as `integer`, `real`/`double precision` as `real`,
/// `numeric` as `integer` when whole and in range, else `real`, `boolean` as `boolean`; every
/// other type in PostgreSQL's text form.
public typealias PostgresValue = SQLValue
public typealias PostgresRow = SQLRow
