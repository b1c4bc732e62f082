@testable import SQLite
import Testing

@Suite struct MigratorTests {
    private let first = Migration(version: 1, name: "one", sql: "CREATE TABLE one(x)")
    private let second = Migration(version: 2, name: "two", sql: "CREATE TABLE two(x); INSERT INTO one VALUES (1)")

    @Test func appliesInVersionOrder() async throws {
        try await withTemporaryFolder { folder in
            let database = try Database(path: folder + "/m.sqlite3")
            defer { database.close() }
            // Listed out of order: `second` needs `one` to exist.
            let applied = try Migrator([second, first]).migrate(database)
            #expect(applied == [first, second])
            #expect(try database.read { try $0.queryOne("SELECT count(*) FROM one")?.int(0) } == 1)
        }
    }

    @Test func aFailingMigrationLeavesNoTrace() async throws {
        try await withTemporaryFolder { folder in
            let database = try Database(path: folder + "/m.sqlite3")
            defer { database.close() }
            let broken = Migration(version: 2, name: "broken", sql: "CREATE TABLE half(x); INSERT INTO nowhere VALUES (1)")
            #expect(throws: SQLiteError.self) { try Migrator([first, broken]).migrate(database) }
            let state = try database.read { connection in
                (
                    try connection.query("SELECT version FROM schema_migrations").map { try $0.int(0) },
                    try connection.queryOne("SELECT count(*) FROM sqlite_master WHERE name = 'half'")?.int(0)
                )
            }
            #expect(state.0 == [1])
            #expect(state.1 == 0)
        }
    }

    @Test func skipsWhatAnotherProcessAppliedAfterTheFirstCheck() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/m.sqlite3"
            let ours = try Database(path: path)
            let theirs = try Database(path: path)
            defer {
                ours.close()
                theirs.close()
            }
            let migrations = [first, second]
            // Between our first check and our first migration, "another process" applies both.
            let applied = try Migrator(migrations).migrate(ours) { migration in
                if migration.version == 1 { _ = try? Migrator(migrations).migrate(theirs) }
            }
            #expect(applied.isEmpty)
            #expect(try ours.read { try $0.query("SELECT version FROM schema_migrations").map { try $0.int(0) } } == [1, 2])
        }
    }

    @Test func refusesDuplicateVersions() async throws {
        try await withTemporaryFolder { folder in
            let database = try Database(path: folder + "/m.sqlite3")
            defer { database.close() }
            let duplicate = Migration(version: 1, name: "again", sql: "SELECT 1")
            #expect(throws: MigrationError.invalidMigrations("version 1 appears twice")) {
                try Migrator([first, duplicate]).migrate(database)
            }
        }
    }
}
