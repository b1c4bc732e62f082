import PostgreSQL
import Synchronization

/// A PostgreSQL connection as the Store's SQL sees it: `?` placeholders numbered `$1…`; values
/// and rows are the drivers' shared types (module SQLRow), so nothing is converted.
final class PostgresSession: SQLConnection {
    let connection: PostgresConnection

    init(_ connection: PostgresConnection) {
        self.connection = connection
    }

    var dialect: SQLDialect { .postgres }

    func run(_ sql: String, _ parameters: [SQLValue]) throws -> Int {
        try connection.run(Self.numbered(sql), parameters)
    }

    func runDeferred(_ sql: String, _ parameters: [SQLValue]) throws {
        try connection.runDeferred(Self.numbered(sql), parameters)
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [SQLRow] {
        try connection.query(Self.numbered(sql), parameters)
    }

    func queryOne(_ sql: String, _ parameters: [SQLValue]) throws -> SQLRow? {
        try query(sql, parameters).first
    }

    func queries(_ statements: [SQLStatement]) throws -> [[SQLRow]] {
        try connection.queries(statements.map { (Self.numbered($0.sql), $0.parameters) })
    }

    /// The Store's statements are a fixed set: each is numbered once.
    private static let numberedSQL = Mutex<[String: String]>([:])

    /// `?` outside quotes becomes `$1`, `$2`, …, as PostgreSQL numbers parameters.
    static func numbered(_ sql: String) -> String {
        if let known = numberedSQL.withLock({ $0[sql] }) { return known }
        var result = ""
        var index = 0
        var inQuote = false
        for character in sql {
            if character == "'" { inQuote.toggle() }
            if character == "?", !inQuote {
                index += 1
                result += "$\(index)"
            } else {
                result.append(character)
            }
        }
        numberedSQL.withLock { $0[sql] = result }
        return result
    }
}
