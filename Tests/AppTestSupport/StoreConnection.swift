import SQLite
import Store

/// A connection of the store's engine (SQLite or PostgreSQL) as `StoreSQL` hands it to a test:
/// every call passes through, with the parameters optional as on SQLite's own connections, so
/// tests written against a SQLite `Database` read the same on either engine.
/// A parameter or a value of `StoreConnection`'s calls: the drivers' shared value, named here so
/// that a test binds `.text`, `.integer` or `.null` without importing a driver.
public typealias StoreValue = SQLiteValue

package final class StoreConnection: SQLConnection {
    private let connection: any SQLConnection

    init(_ connection: any SQLConnection) { self.connection = connection }

    package var dialect: SQLDialect { connection.dialect }

    @discardableResult
    package func run(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> Int { try connection.run(sql, parameters) }

    package func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> [Row] { try connection.query(sql, parameters) }

    package func queryOne(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> Row? { try connection.queryOne(sql, parameters) }
}
