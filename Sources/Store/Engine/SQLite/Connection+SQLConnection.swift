import SQLite

/// SQLite's connection speaks the Store's SQL as it is: `?` placeholders, SQLRow's values.
extension Connection: SQLConnection {
    package var dialect: SQLDialect { .sqlite }
}
