import SQLite
import Store
import Testing
import TestSupport

@Suite struct StoreOpenerTests {
    private struct Recorded: Equatable {
        let version: Int
        let name: String
        let appliedAt: String
    }

    private func recorded(_ database: Database) throws -> [Recorded] {
        try database.read { connection in
            try connection.query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").map {
                Recorded(version: try $0.int(0), name: try $0.string(1), appliedAt: try $0.string(2))
            }
        }
    }

    private func tableExists(_ database: Database, _ name: String) throws -> Bool {
        try database.read { connection in
            try connection.queryOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]) != nil
        }
    }

    @Test func migratesANewDatabaseAndReportsWhatItApplied() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/data/siwa.sqlite3"
            let applied = try StoreOpener.migrate(path: path)
            #expect(applied == Schema.migrations)
            #expect(!applied.isEmpty)
            let database = try Database(path: path)
            defer { database.close() }
            #expect(try tableExists(database, "server_state"))
            #expect(try recorded(database).map(\.version) == Schema.migrations.map(\.version))
            #expect(try recorded(database).map(\.name) == Schema.migrations.map(\.name))
        }
    }

    @Test func migratingTwiceIsANoOp() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/siwa.sqlite3"
            try StoreOpener.migrate(path: path)
            let before = try {
                let database = try Database(path: path)
                defer { database.close() }
                return try recorded(database)
            }()
            #expect(try StoreOpener.migrate(path: path).isEmpty)
            let database = try StoreOpener.open(path: path, readers: 2)
            defer { database.close() }
            #expect(try recorded(database) == before)
        }
    }

    @Test func refusesADatabaseFromANewerBuild() async throws {
        let future = Schema.version + 1
        try await withTemporaryFolder { folder in
            let path = folder + "/siwa.sqlite3"
            try StoreOpener.migrate(path: path)
            do {
                let database = try Database(path: path)
                defer { database.close() }
                try database.writeAndWait {
                    try $0.run("INSERT INTO schema_migrations VALUES (?, 'from the future', '2030-01-01T00:00:00Z')", [.integer(Int64(future))])
                }
            }
            let error = #expect(throws: MigrationError.self) { try StoreOpener.open(path: path, readers: 1) }
            #expect(error?.description == "database schema version \(future) is newer than this build (\(Schema.version))")
            #expect(throws: MigrationError.newerThanBuild(recorded: future, known: Schema.version)) {
                try StoreOpener.migrate(path: path)
            }
        }
    }

    @Test func refusesAMismatchedMigrationName() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/siwa.sqlite3"
            try StoreOpener.migrate(path: path)
            do {
                let database = try Database(path: path)
                defer { database.close() }
                try database.writeAndWait { try $0.run("UPDATE schema_migrations SET name = 'renamed' WHERE version = 1") }
            }
            let error = #expect(throws: MigrationError.self) { try StoreOpener.migrate(path: path) }
            #expect(error == .nameMismatch(version: 1, recorded: "renamed", expected: Schema.migrations[0].name))
            #expect(error?.description.contains("renamed") == true)
        }
    }

    @Test(arguments: 0..<3)
    func concurrentMigratorsApplyTheSchemaOnce(_ round: Int) async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/siwa.sqlite3"
            // Plain CREATE TABLEs fail if run twice, so a double application cannot go unnoticed;
            // many of them keep both migrators busy at the same time.
            let extra = (100..<140).map { version in
                Migration(version: version, name: "extra \(version)", sql: "CREATE TABLE extra_\(version)(x)")
            }
            let migrations = Schema.migrations + extra
            // Two Database values are two write connections, as two processes would have.
            let first = try Database(path: path, readers: 1)
            let second = try Database(path: path, readers: 1)
            defer {
                first.close()
                second.close()
            }
            let migrator = Migrator(migrations)
            let start = StartLine(runners: 2)
            async let a = onOwnThread { start.wait(); return try migrator.migrate(first) }
            async let b = onOwnThread { start.wait(); return try migrator.migrate(second) }
            let (appliedByFirst, appliedBySecond) = try await (a, b)

            let versions = (appliedByFirst + appliedBySecond).map(\.version).sorted()
            #expect(versions == migrations.map(\.version))
            #expect(try recorded(first).map(\.version) == migrations.map(\.version))
            let tables = try first.read { try $0.queryOne("SELECT count(*) FROM sqlite_master WHERE name LIKE 'extra_%'")?.int(0) }
            #expect(tables == extra.count)
        }
    }
}
