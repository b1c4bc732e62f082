@testable import SQLite
import Testing

@Suite struct ConnectionTests {
    private func open(_ folder: String) throws -> Connection {
        let connection = try Connection(path: folder + "/connection.sqlite3")
        try connection.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
        return connection
    }

    @Test func statementsArePreparedOnceAndReused() async throws {
        try await withTemporaryFolder { folder in
            let connection = try open(folder)
            let insert = "INSERT INTO t(id, name) VALUES (?, ?)"
            #expect(try connection.run(insert, [1, "one"]) == 1)
            let cached = connection.cachedStatementCount
            try connection.run(insert, [2, "two"])
            try connection.run(insert, [3, "three"])
            #expect(connection.cachedStatementCount == cached)

            let select = "SELECT name FROM t WHERE id = ?"
            #expect(try connection.queryOne(select, [1])?.string(0) == "one")
            #expect(try connection.queryOne(select, [2])?.string(0) == "two")
            #expect(try connection.queryOne(select, [9]) == nil)
            #expect(connection.cachedStatementCount == cached + 1)
            #expect(connection.lastInsertRowID == 3)
        }
    }

    @Test func aStatementLeftMidResultIsResetBeforeReuse() async throws {
        try await withTemporaryFolder { folder in
            let connection = try open(folder)
            for id in 1...3 { try connection.run("INSERT INTO t(id, name) VALUES (?, ?)", [.integer(Int64(id)), .text("n\(id)")]) }
            let select = "SELECT id FROM t ORDER BY id"
            // queryOne stops after the first row; the next call must start over.
            #expect(try connection.queryOne(select)?.int(0) == 1)
            #expect(try connection.query(select).map { try $0.int(0) } == [1, 2, 3])
            #expect(try connection.query(select).map { try $0.int("id") } == [1, 2, 3])
        }
    }

    @Test func syntaxErrorsCarryCodeMessageAndSQL() async throws {
        try await withTemporaryFolder { folder in
            let connection = try open(folder)
            let error = #expect(throws: SQLiteError.self) { try connection.query("SELEC 1") }
            #expect(error?.code == 1) // SQLITE_ERROR
            #expect(error?.message.contains("syntax error") == true)
            #expect(error?.sql == "SELEC 1")
            #expect(error?.description.contains("SELEC 1") == true)

            let execError = #expect(throws: SQLiteError.self) { try connection.execute("CREATE TABLE; DROP") }
            #expect(execError?.code == 1)
            #expect(execError?.sql == "CREATE TABLE; DROP")
        }
    }

    @Test func uniqueViolationIsAConstraintError() async throws {
        try await withTemporaryFolder { folder in
            let connection = try open(folder)
            try connection.run("INSERT INTO t(name) VALUES (?)", ["same"])
            let error = #expect(throws: SQLiteError.self) {
                try connection.run("INSERT INTO t(name) VALUES (?)", ["same"])
            }
            #expect(error?.isConstraint == true)
            #expect(error?.isUniqueViolation == true)
            #expect(error?.isBusy == false)
            #expect(error?.code == 19)
            #expect(error?.extendedCode == 2067) // SQLITE_CONSTRAINT_UNIQUE
            #expect(error?.message == "UNIQUE constraint failed: t.name")
            #expect(error?.sql == "INSERT INTO t(name) VALUES (?)")
            // Bound values never appear in errors: they may be secrets.
            #expect(error?.description.contains("same") == false)
        }
    }

    @Test func wrongParameterCountAndSeveralStatementsAreRefused() async throws {
        try await withTemporaryFolder { folder in
            let connection = try open(folder)
            let count = #expect(throws: SQLiteError.self) { try connection.run("INSERT INTO t(name) VALUES (?)") }
            #expect(count?.code == 25) // SQLITE_RANGE
            let several = #expect(throws: SQLiteError.self) {
                try connection.run("INSERT INTO t(name) VALUES ('a'); INSERT INTO t(name) VALUES ('b')")
            }
            #expect(several?.isMisuse == true)
            #expect(try connection.queryOne("SELECT count(*) FROM t")?.int(0) == 0)
            // A trailing semicolon is one statement.
            #expect(try connection.queryOne("SELECT 1;")?.int(0) == 1)
        }
    }

    @Test func transactionCommitsOrRollsBack() async throws {
        try await withTemporaryFolder { folder in
            let connection = try open(folder)
            try connection.transaction { try $0.run("INSERT INTO t(name) VALUES ('kept')") }
            struct Failure: Error {}
            #expect(throws: Failure.self) {
                try connection.transaction { connection in
                    try connection.run("INSERT INTO t(name) VALUES ('undone')")
                    throw Failure()
                }
            }
            #expect(!connection.isInTransaction)
            #expect(try connection.query("SELECT name FROM t").map { try $0.string(0) } == ["kept"])
        }
    }

    @Test func savepointUndoesOnlyItself() async throws {
        try await withTemporaryFolder { folder in
            let connection = try open(folder)
            struct Failure: Error {}
            try connection.transaction { connection in
                try connection.run("INSERT INTO t(name) VALUES ('outer')")
                #expect(throws: Failure.self) {
                    try connection.savepoint { connection in
                        try connection.run("INSERT INTO t(name) VALUES ('inner')")
                        throw Failure()
                    }
                }
                // A nested transaction() becomes a savepoint too.
                try connection.transaction { try $0.run("INSERT INTO t(name) VALUES ('nested')") }
                #expect(connection.isInTransaction)
            }
            #expect(try connection.query("SELECT name FROM t ORDER BY id").map { try $0.string(0) } == ["outer", "nested"])
        }
    }
}
