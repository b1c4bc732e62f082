import SQLRow

/// Which engine a connection belongs to, for the few statements whose SQL differs.
package enum SQLDialect: Sendable {
    case sqlite
    case postgres
}

/// A connection inside a transaction, as the Store's SQL sees it. SQL is written once with
/// `?` placeholders; the PostgreSQL engine numbers them. Values and rows are the drivers'
/// shared types (module SQLRow), so record decoders are written once and nothing is converted.
package protocol SQLConnection: AnyObject {
    var dialect: SQLDialect { get }
    @discardableResult
    func run(_ sql: String, _ parameters: [SQLValue]) throws -> Int
    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [SQLRow]
    func queryOne(_ sql: String, _ parameters: [SQLValue]) throws -> SQLRow?
    /// Runs a statement of the write's transaction whose row count the caller does not need,
    /// possibly later: PostgreSQL sends it with the next statement that waits for an answer
    /// or with COMMIT (one round trip for both), and its error then fails that later call and
    /// the transaction. SQLite, in process, runs it at once.
    func runDeferred(_ sql: String, _ parameters: [SQLValue]) throws
    /// Runs `statements` in order and returns each one's rows: PostgreSQL sends them in one
    /// round trip (with what was deferred before them); the first error is thrown and the
    /// statements after it do not run. SQLite runs them one after another.
    func queries(_ statements: [SQLStatement]) throws -> [[SQLRow]]
}

extension SQLConnection {
    package func runDeferred(_ sql: String, _ parameters: [SQLValue]) throws { try run(sql, parameters) }

    package func queries(_ statements: [SQLStatement]) throws -> [[SQLRow]] {
        try statements.map { try query($0.sql, $0.parameters) }
    }

    @discardableResult
    func run(_ sql: String) throws -> Int { try run(sql, []) }
    func query(_ sql: String) throws -> [SQLRow] { try query(sql, []) }
    func queryOne(_ sql: String) throws -> SQLRow? { try queryOne(sql, []) }
}
