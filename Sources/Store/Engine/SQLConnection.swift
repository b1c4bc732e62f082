import SQLite

/// The values the Store binds and reads, whichever engine runs the SQL.
typealias SQLValue = SQLiteValue

/// Which engine a connection belongs to, for the few statements whose SQL differs.
package enum SQLDialect: Sendable {
    case sqlite
    case postgres
}

/// A connection inside a transaction, as the Store's SQL sees it. SQL is written once with
/// `?` placeholders; the PostgreSQL engine numbers them. Rows come back as `SQLite.Row` from
/// either engine, so record decoders are written once.
package protocol SQLConnection: AnyObject {
    var dialect: SQLDialect { get }
    @discardableResult
    func run(_ sql: String, _ parameters: [SQLiteValue]) throws -> Int
    func query(_ sql: String, _ parameters: [SQLiteValue]) throws -> [Row]
    func queryOne(_ sql: String, _ parameters: [SQLiteValue]) throws -> Row?
}

extension Connection: SQLConnection {
    package var dialect: SQLDialect { .sqlite }
}

extension SQLConnection {
    @discardableResult
    func run(_ sql: String) throws -> Int { try run(sql, []) }
    func query(_ sql: String) throws -> [Row] { try query(sql, []) }
    func queryOne(_ sql: String) throws -> Row? { try queryOne(sql, []) }
}
