@testable import PostgreSQL
import Testing
import TestSupport

/// Against the shared throwaway cluster (Scripts/postgres-cluster), a fresh database per test.
/// Skipped, loudly, where PostgreSQL is not installed; never under CI (CI=true), where its
/// absence fails them.
@Suite(.enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"), .timeLimit(.minutes(1)))
struct PostgresConnectionTests {
    private func open() async throws -> PostgresConnection {
        let url = try await PostgresCluster.shared().makeDatabase()
        return try PostgresConnection(url)
    }

    @Test func everyValueTypeRoundTripsIncludingNull() async throws {
        let connection = try await open()
        try connection.execute("""
            CREATE TABLE t(i bigint, small integer, r double precision, s text, b bytea, f boolean, at timestamptz);
            """)
        let allBytes = (0...255).map { UInt8($0) }
        let rows: [[PostgresValue]] = [
            [.integer(.max), .integer(-32768), .real(3.5), .text("héllo ✓"), .blob(allBytes), .boolean(true), .text("2026-01-02T03:04:05Z")],
            [.integer(.min), .integer(0), .real(-0.1), .text(""), .blob([]), .boolean(false), .null],
            [.null, .null, .null, .null, .null, .null, .null],
        ]
        for (index, row) in rows.enumerated() {
            try connection.run("INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7)", row)
            let read = try #require(try connection.queryOne("SELECT i, small, r, s, b, f, at FROM t OFFSET $1", [.integer(Int64(index))]))
            #expect(Array(read.values.dropLast()) == Array(row.dropLast()))
        }
        let first = try #require(try connection.queryOne("SELECT * FROM t ORDER BY i DESC NULLS LAST LIMIT 1"))
        #expect(try first.int64("i") == .max)
        #expect(try first.int("small") == -32768)
        #expect(try first.double("r") == 3.5)
        #expect(try first.string("s") == "héllo ✓")
        #expect(try first.blob("b") == allBytes)
        #expect(try first.bool("f"))
        // Text binds untyped, so a timestamptz column takes it; it reads back in text form.
        #expect(try first.string("at") == "2026-01-02 03:04:05+00")

        let nulls = try #require(try connection.queryOne("SELECT * FROM t WHERE i IS NULL"))
        #expect(try nulls.optionalInt64("i") == nil)
        #expect(try nulls.optionalDouble("r") == nil)
        #expect(try nulls.optionalString("s") == nil)
        #expect(try nulls.optionalBlob("b") == nil)
        #expect(try nulls.optionalBool("f") == nil)
        #expect(throws: SQLRowError.self) { try nulls.int64("i") }
    }

    @Test func realsRoundTripExactly() async throws {
        let connection = try await open()
        for number in [0.1, 1.0 / 3.0, .pi, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, .infinity, -.infinity] {
            #expect(try connection.queryOne("SELECT $1::float8", [.real(number)])?.double(0) == number)
        }
        #expect(try connection.queryOne("SELECT $1::float8", [.real(.nan)])?.double(0).isNaN == true)
    }

    @Test func largeTextAndBlobsRoundTrip() async throws {
        let connection = try await open()
        let text = String(repeating: "ab'c;\"\\ ✓", count: 200_000)
        #expect(try connection.queryOne("SELECT $1::text", [.text(text)])?.string(0) == text)
        var generator = SystemRandomNumberGenerator()
        let blob = (0..<3_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(try connection.queryOne("SELECT $1::bytea", [.blob(blob)])?.blob(0) == blob)
    }

    @Test func parametersAreDataNeverSQL() async throws {
        let connection = try await open()
        try connection.execute("CREATE TABLE t(name text)")
        let hostile = "x'); DROP TABLE t; --"
        try connection.run("INSERT INTO t(name) VALUES ($1)", [.text(hostile)])
        try connection.run("INSERT INTO t(name) VALUES ($1)", ["it's; \"quoted\"; $1 \\ done"])
        #expect(try connection.query("SELECT name FROM t ORDER BY name").map { try $0.string(0) } == [
            "it's; \"quoted\"; $1 \\ done", hostile,
        ])
        #expect(try connection.queryOne("SELECT count(*) FROM t WHERE name = $1", [.text(hostile)])?.int(0) == 1)
        // A statement cannot be smuggled in after the first: the server refuses to prepare two.
        let error = #expect(throws: PostgresError.self) { try connection.run("SELECT 1; DROP TABLE t") }
        #expect(error?.code == "42601")
        #expect(try connection.queryOne("SELECT count(*) FROM t")?.int(0) == 2)
    }

    @Test func textWithNULIsRefusedNotCut() async throws {
        let connection = try await open()
        let error = #expect(throws: PostgresError.self) { try connection.query("SELECT $1::text", ["a\u{0}b"]) }
        #expect(error?.code == "22021")
    }

    @Test func integersNumericsAndOtherTypesDecode() async throws {
        let connection = try await open()
        let row = try #require(try connection.queryOne("""
            SELECT 2::int2 AS a, 3::int4 AS b, 4::int8 AS c, sum(x) AS total, 1.5::numeric AS n, 'NaN'::numeric AS nan,
                   '{"k": 1}'::jsonb AS j, '7f1e7a3c-0000-4000-8000-000000000000'::uuid AS u, count(*) AS k
            FROM (VALUES (9223372036854775807::int8), (1::int8)) AS v(x)
            """))
        #expect(try row.int("a") == 2)
        #expect(try row.int("b") == 3)
        #expect(try row.int("c") == 4)
        // sum(bigint) is numeric, and this one does not fit 64 bits.
        #expect(try row.double("total") == 9_223_372_036_854_775_808.0)
        #expect(try row.double("n") == 1.5)
        #expect(try row.double("nan").isNaN)
        #expect(try row.string("j") == #"{"k": 1}"#)
        #expect(try row.string("u") == "7f1e7a3c-0000-4000-8000-000000000000")
        #expect(try row.int("k") == 2)
        let mismatch = #expect(throws: SQLRowError.self) { try row.string("a") }
        #expect(mismatch?.isMismatch == true)
        #expect(mismatch?.message == "column a is integer, expected text")
    }

    @Test func uniqueViolationIsRecognisedWithItsConstraint() async throws {
        let connection = try await open()
        try connection.execute("CREATE TABLE t(email text CONSTRAINT t_email_key UNIQUE)")
        try connection.run("INSERT INTO t VALUES ($1)", ["secret@example.com"])
        let error = #expect(throws: PostgresError.self) { try connection.run("INSERT INTO t VALUES ($1)", ["secret@example.com"]) }
        #expect(error?.isUniqueViolation == true)
        #expect(error?.isConnectionFailure == false)
        #expect(error?.constraint == "t_email_key")
        // The server's DETAIL quotes the key; it is left out.
        #expect(error?.description.contains("secret@example.com") == false)
        #expect(error?.sql == "INSERT INTO t VALUES ($1)")
    }

    @Test func transactionCommitsOrRollsBackOnThrow() async throws {
        struct Abandon: Error {}
        let connection = try await open()
        try connection.execute("CREATE TABLE t(x bigint)")
        try connection.transaction { try $0.run("INSERT INTO t VALUES (1)") }
        #expect(throws: Abandon.self) {
            try connection.transaction { connection in
                try connection.run("INSERT INTO t VALUES (2)")
                throw Abandon()
            }
        }
        #expect(!connection.isInTransaction)
        #expect(try connection.query("SELECT x FROM t").map { try $0.int(0) } == [1])

        // Nested: a savepoint undoes only its own part.
        try connection.transaction(.serializable) { connection in
            try connection.run("INSERT INTO t VALUES (3)")
            _ = try? connection.transaction { connection in
                try connection.run("INSERT INTO t VALUES (4)")
                throw Abandon()
            }
            try connection.run("INSERT INTO t VALUES (5)")
        }
        #expect(try connection.query("SELECT x FROM t ORDER BY x").map { try $0.int(0) } == [1, 3, 5])
    }

    /// A transaction's BEGIN goes with its first statement (one round trip for both): the
    /// statement runs inside the transaction at the isolation asked for, whether or not it was
    /// prepared before; a first statement that fails leaves no transaction open; a body that
    /// sends nothing opens none.
    @Test func aTransactionOpensWithItsFirstStatement() async throws {
        struct Abandon: Error {}
        let connection = try await open()
        try connection.execute("CREATE TABLE t(x bigint)")
        for _ in 0..<2 {  // the first time the statement is prepared first, then only executed
            let seen = try connection.transaction(.repeatableRead) { connection -> (String?, Bool) in
                let isolation = try connection.queryOne("SELECT current_setting('transaction_isolation')")?.string(0)
                let first = try connection.queryOne("SELECT now()::text")?.string(0)
                _ = try connection.queryOne("SELECT pg_sleep(0.01)")  // time moves on (any amount will do)
                return (isolation, try connection.queryOne("SELECT now()::text")?.string(0) == first)
            }
            #expect(seen.0 == "repeatable read")
            #expect(seen.1, "one transaction: now() stands still in it")
        }

        #expect(throws: PostgresError.self) { try connection.transaction { try $0.run("INSERT INTO t VALUES (1 / 0)") } }
        #expect(!connection.isInTransaction)
        #expect(throws: Abandon.self) { try connection.transaction { _ in throw Abandon() } }
        #expect(!connection.isInTransaction)
        #expect(try connection.transaction { _ in 7 } == 7)
        #expect(!connection.isInTransaction)

        // A savepoint as the first thing, and a rollback after statements, still work.
        try connection.transaction { connection in
            _ = try? connection.transaction { connection in
                try connection.run("INSERT INTO t VALUES (2)")
                throw Abandon()
            }
            try connection.run("INSERT INTO t VALUES (3)")
        }
        #expect(throws: Abandon.self) {
            try connection.transaction { connection in
                try connection.run("INSERT INTO t VALUES (4)")
                throw Abandon()
            }
        }
        #expect(try connection.query("SELECT x FROM t ORDER BY x").map { try $0.int(0) } == [3])
        #expect(try connection.queryOne("SELECT 1")?.int(0) == 1)
    }

    /// `runDeferred` sends nothing by itself: its statements go, in order, with the next
    /// statement that waits for an answer (which sees them), or with COMMIT; an error among them
    /// is thrown by that later call and the transaction keeps nothing.
    @Test func deferredStatementsTravelWithTheNextStatementOrTheCommit() async throws {
        struct Abandon: Error {}
        let connection = try await open()
        try connection.execute("CREATE TABLE t(x bigint PRIMARY KEY)")
        for _ in 0..<2 {  // prepared the first time, only executed the second
            try connection.execute("TRUNCATE t")
            let seen = try connection.transaction { connection -> Int? in
                try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(1)])
                try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(2)])
                let count = try connection.queryOne("SELECT count(*) FROM t")?.int(0)
                try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(3)])  // goes with COMMIT
                return count
            }
            #expect(seen == 2)
            #expect(try connection.query("SELECT x FROM t ORDER BY x").map { try $0.int(0) } == [1, 2, 3])
        }

        // A failing deferred statement: not thrown where it was queued, but by the next call.
        try connection.execute("TRUNCATE t")
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.run("INSERT INTO t VALUES (1)")
                try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(1)])
                _ = try connection.queryOne("SELECT 1")
                Issue.record("the next statement ran past a failed deferred one")
            }
        }
        #expect(error?.isUniqueViolation == true)
        // …or by COMMIT, when it was the last thing sent.
        #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.run("INSERT INTO t VALUES (5)")
                try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(5)])
            }
        }
        #expect(!connection.isInTransaction)
        #expect(try connection.queryOne("SELECT count(*) FROM t")?.int(0) == 0)

        // A savepoint that throws drops its own deferred statements, not those before it.
        try connection.transaction { connection in
            try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(6)])
            _ = try? connection.transaction { connection in
                try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(7)])
                throw Abandon()
            }
            try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(8)])
        }
        #expect(try connection.query("SELECT x FROM t ORDER BY x").map { try $0.int(0) } == [6, 8])

        // A body that only defers still commits (its BEGIN goes in the same pipeline); one that
        // throws sends nothing.
        try connection.transaction { try $0.runDeferred("INSERT INTO t VALUES ($1)", [.integer(9)]) }
        #expect(throws: Abandon.self) {
            try connection.transaction { connection in
                try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(10)])
                throw Abandon()
            }
        }
        // Outside a transaction it runs at once.
        try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(11)])
        #expect(try connection.query("SELECT x FROM t ORDER BY x").map { try $0.int(0) } == [6, 8, 9, 11])
    }

    /// `queries` sends its statements in one round trip, after what was deferred (which they
    /// see), and returns each one's rows in order; the first error is thrown, what follows it
    /// does not run, and the transaction keeps nothing.
    @Test func queriesPreparedWhenTheCacheIsFullAllRun() async throws {
        let connection = try await open()
        // The cache one short of full: the first new statement of the pipeline fills it, and
        // the next must not deallocate the first before the pipeline is sent.
        while connection.cachedStatementCount < PostgresConnection.statementCacheLimit - 1 {
            _ = try connection.query("SELECT \(connection.cachedStatementCount)::bigint + $1", [.integer(0)])
        }
        let rows = try connection.queries([("SELECT $1::bigint AS a", [.integer(1)]), ("SELECT $1::bigint AS b", [.integer(2)])])
        #expect(try rows.map { try $0.first?.int(0) } == [1, 2])
        #expect(connection.cachedStatementCount <= PostgresConnection.statementCacheLimit)
    }

    @Test func queriesTravelTogetherInOrder() async throws {
        let connection = try await open()
        try connection.execute("CREATE TABLE t(x bigint PRIMARY KEY)")
        let insert = "INSERT INTO t VALUES ($1) ON CONFLICT DO NOTHING RETURNING x"
        var trips: [Int] = []
        for _ in 0..<2 {  // prepared the first time, only executed the second
            try connection.execute("TRUNCATE t")
            let rows = try connection.transaction { connection -> [[PostgresRow]] in
                try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(1)])
                let before = connection.roundTrips
                let rows = try connection.queries([
                    ("SELECT count(*) FROM t", []), (insert, [.integer(2)]), (insert, [.integer(1)]), ("SELECT x FROM t ORDER BY x", []),
                ])
                trips.append(connection.roundTrips - before)
                return rows
            }
            #expect(rows.map(\.count) == [1, 1, 0, 2])
            #expect(try rows[0].first?.int(0) == 1)
            #expect(try rows[3].map { try $0.int(0) } == [1, 2])
            #expect(try connection.query("SELECT x FROM t ORDER BY x").map { try $0.int(0) } == [1, 2])
        }
        #expect(trips.last == 1, "BEGIN, the deferred INSERT and the four statements in one round trip")

        try connection.execute("TRUNCATE t")
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.run("INSERT INTO t VALUES (7)")
                _ = try connection.queries([
                    ("SELECT 1", []), ("INSERT INTO t VALUES ($1)", [.integer(8)]), ("INSERT INTO t VALUES ($1)", [.integer(7)]),
                    ("INSERT INTO t VALUES ($1)", [.integer(9)]),
                ])
                Issue.record("queries returned past a failed statement")
            }
        }
        #expect(error?.isUniqueViolation == true)
        #expect(!connection.isInTransaction)
        #expect(try connection.queryOne("SELECT count(*) FROM t")?.int(0) == 0)
        // Nothing to send sends nothing; outside a transaction they run at once.
        let before = connection.roundTrips
        #expect(try connection.queries([]).isEmpty)
        #expect(connection.roundTrips == before)
        #expect(try connection.queries([(insert, [.integer(3)]), ("SELECT x FROM t", [])]).map(\.count) == [1, 1])
        #expect(try connection.query("SELECT x FROM t").map { try $0.int(0) } == [3])
    }

    /// A commit that carries a notification and deferred statements: the condition sees them.
    @Test func aCommitNotificationSeesTheDeferredStatements() async throws {
        let connection = try await open()
        try connection.execute("CREATE TABLE t(x bigint)")
        var sent: Bool?
        try connection.transaction(.readCommitted, { connection in
            try connection.runDeferred("INSERT INTO t VALUES ($1)", [.integer(42)])
        }, notifyingAtCommit: {
            .init(channel: "deferred", payload: "p", condition: "EXISTS (SELECT 1 FROM t WHERE x = 42)")
        }, notified: { sent = $0 })
        #expect(sent == true)
        #expect(try connection.queryOne("SELECT count(*) FROM t")?.int(0) == 1)
    }

    @Test func aCommitAfterASwallowedErrorIsReportedAsRolledBack() async throws {
        let connection = try await open()
        try connection.execute("CREATE TABLE t(x bigint PRIMARY KEY)")
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.run("INSERT INTO t VALUES (1)")
                _ = try? connection.run("INSERT INTO t VALUES (1)")
            }
        }
        #expect(error?.code == "25P02")
        #expect(try connection.queryOne("SELECT count(*) FROM t")?.int(0) == 0)
    }

    @Test func statementsArePreparedOnceAndSurviveSchemaChanges() async throws {
        let connection = try await open()
        try connection.execute("CREATE TABLE t(id bigint, name text)")
        let insert = "INSERT INTO t VALUES ($1, $2)"
        #expect(try connection.run(insert, [1, "one"]) == 1)
        let cached = connection.cachedStatementCount
        try connection.run(insert, [2, "two"])
        #expect(connection.cachedStatementCount == cached)
        #expect(try connection.run("UPDATE t SET name = name || '!'") == 2)

        #expect(try connection.query("SELECT * FROM t ORDER BY id").first?.count == 2)
        try connection.execute("ALTER TABLE t ADD COLUMN extra bigint DEFAULT 7")
        // The cached plan's result type changed: prepared again, not an error.
        let row = try #require(try connection.query("SELECT * FROM t ORDER BY id").first)
        #expect(row.columnNames == ["id", "name", "extra"])
        #expect(try row.int("extra") == 7)
    }

    @Test func aScriptRunsSeveralStatements() async throws {
        let connection = try await open()
        try connection.execute("CREATE TABLE a(x int); CREATE TABLE b(y int); INSERT INTO a VALUES (1);")
        #expect(try connection.queryOne("SELECT count(*) FROM a")?.int(0) == 1)
        let error = #expect(throws: PostgresError.self) { try connection.execute("SELEC 1") }
        #expect(error?.code == "42601")
        #expect(error?.message.contains("syntax error") == true)
    }

    @Test func closedConnectionRefusesCalls() async throws {
        let connection = try await open()
        connection.close()
        let error = #expect(throws: PostgresError.self) { try connection.query("SELECT 1") }
        #expect(error?.isConnectionFailure == true)
        #expect(!connection.isConnected)
    }
}
