@testable import Store
import Testing
import TestSupport

/// The two migration lists (`Schema` for SQLite, `PostgresSchema`) are written apart, in each
/// engine's types: after migrating, both databases must hold the same versions, tables,
/// columns (names, and types by family) and indexes (names and columns).
@Suite(.enabled(if: PostgresCluster.testsEnabled), .timeLimit(.minutes(2)))
struct SchemaParityTests {
    /// What a migrated database holds, as both engines can be asked it.
    struct Shape: Equatable, CustomStringConvertible {
        var versions: [String] = []
        /// "table.column family", sorted.
        var columns: [String] = []
        /// "table.index(column, …)", sorted; indexes that back a primary key or a UNIQUE column
        /// are the columns' business (SQLite names them itself).
        var indexes: [String] = []

        var description: String { (["versions:"] + versions + ["columns:"] + columns + ["indexes:"] + indexes).joined(separator: "\n") }
    }

    /// Types grouped as the Store reads them: a SQLite INTEGER flag is a PostgreSQL boolean; an
    /// expression index column is named "(expression)" on both.
    static func family(_ type: String) -> String {
        let type = type.lowercased()
        if type.contains("int") || type == "boolean" { return "integer" }
        // SQLite keeps times as ISO 8601 text.
        if type.contains("char") || type == "text" || type == "uuid" || type.hasPrefix("json") || type.hasPrefix("timestamp") { return "text" }
        if type == "blob" || type == "bytea" { return "blob" }
        if type == "real" || type.hasPrefix("double") || type == "numeric" { return "real" }
        return type
    }

    static func shape(_ engine: Engine) async throws -> Shape {
        try await withStore(engine) { store in
            try await store.engine.read { connection in
                var shape = Shape()
                shape.versions = try connection.query("SELECT version, name FROM schema_migrations ORDER BY version").map {
                    "\(try $0.int(0)) \(try $0.string(1))"
                }
                switch engine {
                case .sqlite:
                    let tables = try connection.query(
                        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                    ).map { try $0.string(0) }
                    for table in tables {
                        for column in try connection.query("SELECT name, type FROM pragma_table_info(?)", [.text(table)]) {
                            shape.columns.append("\(table).\(try column.string(0)) \(family(try column.string(1)))")
                        }
                    }
                    for index in try connection.query("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL") {
                        let name = try index.string(0)
                        let columns = try connection.query("SELECT name FROM pragma_index_info(?) ORDER BY seqno", [.text(name)])
                            .map { try $0.optionalString(0) ?? "(expression)" }
                        shape.indexes.append("\(try index.string(1)).\(name)(\(columns.joined(separator: ", ")))")
                    }
                case .postgres:
                    for column in try connection.query(
                        "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()")
                    {
                        shape.columns.append("\(try column.string(0)).\(try column.string(1)) \(family(try column.string(2)))")
                    }
                    for index in try connection.query(
                        """
                        SELECT i.tablename, i.indexname FROM pg_indexes i
                        WHERE i.schemaname = current_schema() AND i.indexname NOT IN (SELECT conname FROM pg_constraint)
                        """)
                    {
                        let name = try index.string(1)
                        let columns = try connection.query(
                            """
                            SELECT a.attname FROM pg_class c
                            JOIN pg_index x ON x.indexrelid = c.oid
                            CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
                            LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
                            WHERE c.relname = ? AND c.relnamespace = current_schema()::regnamespace
                            ORDER BY k.position
                            """, [.text(name)]
                        ).map { try $0.optionalString(0) ?? "(expression)" }
                        shape.indexes.append("\(try index.string(0)).\(name)(\(columns.joined(separator: ", ")))")
                    }
                }
                shape.columns.sort()
                shape.indexes.sort()
                return shape
            }
        }
    }

    @Test func bothEnginesHoldTheSameSchemaAfterMigrating() async throws {
        let sqlite = try await Self.shape(.sqlite)
        let postgres = try await Self.shape(.postgres)
        #expect(sqlite.versions == postgres.versions)
        #expect(sqlite.versions.count == Schema.migrations.count)
        #expect(!sqlite.columns.isEmpty && !sqlite.indexes.isEmpty)
        // Differences named one by one, so a failure says which side lacks what.
        #expect(sqlite.columns.filter { !postgres.columns.contains($0) } == [], "only on SQLite")
        #expect(postgres.columns.filter { !sqlite.columns.contains($0) } == [], "only on PostgreSQL")
        #expect(sqlite.indexes.filter { !postgres.indexes.contains($0) } == [], "only on SQLite")
        #expect(postgres.indexes.filter { !sqlite.indexes.contains($0) } == [], "only on PostgreSQL")
    }
}
