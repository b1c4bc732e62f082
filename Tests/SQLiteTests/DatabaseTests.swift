import Foundation
@testable import SQLite
import Testing
import TestSupport

@Suite struct DatabaseTests {
    /// A database with table `t(id, name UNIQUE)`, closed after `body`.
    private func withDatabase(
        readers: Int = 4,
        _ body: (Database, String) async throws -> Void
    ) async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/test.sqlite3"
            let database = try Database(path: path, readers: readers)
            defer { database.close() }
            try await database.write {
                try $0.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
            }
            try await body(database, path)
        }
    }

    private func names(_ database: Database) throws -> [String] {
        try database.read { try $0.query("SELECT name FROM t ORDER BY name").map { try $0.string(0) } }
    }

    private func count(_ database: Database) throws -> Int {
        try database.read { try $0.queryOne("SELECT count(*) FROM t")?.int(0) ?? -1 }
    }

    private struct Failure: Error {}

    @Test func twoHundredConcurrentWritesAllCommit() async throws {
        try await withDatabase { database, _ in
            let before = database.writerCommitCount
            try await withThrowingTaskGroup(of: Int64.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        try await database.write { connection in
                            try connection.run("INSERT INTO t(name) VALUES (?)", [.text("row \(index)")])
                            return connection.lastInsertRowID
                        }
                    }
                }
                var ids = Set<Int64>()
                for try await id in group { ids.insert(id) }
                #expect(ids.count == 200)
            }
            #expect(try count(database) == 200)
            #expect(try Set(names(database)) == Set((0..<200).map { "row \($0)" }))
            #expect(database.writerCommitCount - before <= 200)
        }
    }

    @Test func queuedWritesShareOneCommit() async throws {
        try await withDatabase { database, _ in
            let gate = WriterGate()
            defer { gate.open() }
            let before = database.writerCommitCount
            async let blocker: Void = database.write { _ in gate.block() }
            try #require(try await eventually { gate.isEntered })
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        _ = try await database.write { try $0.run("INSERT INTO t(name) VALUES (?)", [.text("row \(index)")]) }
                    }
                }
                try #require(try await eventually { database.writerQueuedCount == 200 })
                gate.open()
                try await group.waitForAll()
            }
            try await blocker
            #expect(try count(database) == 200)
            // The blocker's own batch, then all 200 queued behind it in one transaction.
            #expect(database.writerCommitCount - before == 2)
        }
    }

    @Test func aFailingJobDoesNotUndoTheOthersInItsBatch() async throws {
        try await withDatabase { database, _ in
            try await database.write { try $0.run("INSERT INTO t(name) VALUES ('existing')") }
            let gate = WriterGate()
            defer { gate.open() }
            let before = database.writerCommitCount
            async let blocker: Void = database.write { _ in gate.block() }
            try #require(try await eventually { gate.isEntered })

            func insert(_ name: String, thenFail: Bool = false) -> Task<Void, any Error> {
                Task {
                    try await database.write { connection in
                        try connection.run("INSERT INTO t(name) VALUES (?)", [.text(name)])
                        if thenFail { throw Failure() }
                    }
                }
            }
            let first = insert("a")
            let failing = insert("b", thenFail: true)
            let duplicate = insert("existing")
            let last = insert("c")
            try #require(try await eventually { database.writerQueuedCount == 4 })
            gate.open()
            try await blocker

            try await first.value
            try await last.value
            await #expect(throws: Failure.self) { try await failing.value }
            let constraint = await #expect(throws: SQLiteError.self) { try await duplicate.value }
            #expect(constraint?.isUniqueViolation == true)
            #expect(try names(database) == ["a", "c", "existing"])
            #expect(database.writerCommitCount - before == 2)
        }
    }

    /// Each job of a batch runs in a savepoint whose journal the writer keeps in memory
    /// (`temp_store=MEMORY`; on file SQLite spills it past 64 KiB and keeps it until COMMIT):
    /// a job that rewrites well over 64 KiB of pages its batch already changed, then fails, is
    /// still undone alone, and the jobs around it commit.
    @Test func aJobThatRewritesManyPagesAndFailsIsUndoneAlone() async throws {
        try await withDatabase { database, _ in
            #expect(try await database.write { try $0.queryOne("PRAGMA temp_store")?.int(0) } == 2)
            let gate = WriterGate()
            defer { gate.open() }
            let before = database.writerCommitCount
            async let blocker: Void = database.write { _ in gate.block() }
            try #require(try await eventually { gate.isEntered })

            let wide = String(repeating: "x", count: 2_000)
            let fill = Task {
                try await database.write { connection in
                    for index in 0..<200 { try connection.run("INSERT INTO t(name) VALUES (?)", [.text("\(index)" + wide)]) }
                }
            }
            try #require(try await eventually { database.writerQueuedCount == 1 })
            let rewrite = Task {
                try await database.write { connection in
                    try connection.run("UPDATE t SET name = 'y' || name")
                    throw Failure()
                }
            }
            try #require(try await eventually { database.writerQueuedCount == 2 })
            let last = Task { try await database.write { _ = try $0.run("INSERT INTO t(name) VALUES ('last')") } }
            try #require(try await eventually { database.writerQueuedCount == 3 })
            gate.open()
            try await blocker

            try await fill.value
            await #expect(throws: Failure.self) { try await rewrite.value }
            try await last.value
            #expect(try count(database) == 201)
            #expect(try database.read { try $0.queryOne("SELECT count(*) FROM t WHERE name LIKE 'y%'")?.int(0) } == 0)
            #expect(database.writerCommitCount - before == 2)
        }
    }

    @Test func aWriteIsVisibleToALaterRead() async throws {
        try await withDatabase { database, _ in
            // Warm a reader first, so the read below reuses a connection opened before the write.
            #expect(try count(database) == 0)
            try await database.write { try $0.run("INSERT INTO t(name) VALUES ('seen')") }
            #expect(try names(database) == ["seen"])
        }
    }

    @Test func readsProceedWhileAWriteTransactionIsOpen() async throws {
        try await withDatabase { database, _ in
            let gate = WriterGate()
            defer { gate.open() }
            async let write: Void = database.write { connection in
                try connection.run("INSERT INTO t(name) VALUES ('pending')")
                gate.block()
            }
            try #require(try await eventually { gate.isEntered })
            let started = ContinuousClock.now
            // Under WAL the reader sees the last commit and does not wait for the writer.
            #expect(try count(database) == 0)
            #expect(ContinuousClock.now - started < .seconds(2))
            gate.open()
            try await write
            #expect(try names(database) == ["pending"])
        }
    }

    @Test func readersOpenMoreConnectionsRatherThanBlock() async throws {
        try await withDatabase(readers: 1) { database, _ in
            try await database.write { try $0.run("INSERT INTO t(name) VALUES ('x')") }
            // Each nested read needs another connection while the outer ones are checked out.
            let total = try database.read { outer in
                try database.read { middle in
                    try database.read { inner in
                        try [outer, middle, inner].map { try $0.queryOne("SELECT count(*) FROM t")?.int(0) ?? 0 }.reduce(0, +)
                    }
                }
            }
            #expect(total == 3)
            #expect(try count(database) == 1)
        }
    }

    @Test func readersCannotWrite() async throws {
        try await withDatabase { database, _ in
            let error = #expect(throws: SQLiteError.self) {
                _ = try database.read { try $0.run("INSERT INTO t(name) VALUES ('sneaky')") }
            }
            #expect(error?.code == 8) // SQLITE_READONLY
            let rows = try count(database)
            #expect(rows == 0)
        }
    }

    @Test func writeAndWaitReturnsAfterCommit() async throws {
        try await withDatabase { database, _ in
            var calls = 0 // Not Sendable-safe on purpose: the caller is blocked while it runs.
            let id = try database.writeAndWait { connection in
                calls += 1
                try connection.run("INSERT INTO t(name) VALUES ('sync')")
                return connection.lastInsertRowID
            }
            #expect(calls == 1)
            #expect(id == 1)
            #expect(try names(database) == ["sync"])
            #expect(throws: Failure.self) { try database.writeAndWait { _ in throw Failure() } }
        }
    }

    @Test func writeAndWaitInsideAWriteIsRefused() async throws {
        try await withDatabase { database, _ in
            let error = await #expect(throws: SQLiteError.self) {
                try await database.write { _ in try database.writeAndWait { _ in 1 } }
            }
            #expect(error?.isMisuse == true)
        }
    }

    @Test func writeWithoutTransactionMustNotLeaveOneOpen() async throws {
        try await withDatabase { database, _ in
            let error = #expect(throws: SQLiteError.self) {
                try database.writeWithoutTransaction { connection in
                    try connection.execute("BEGIN; INSERT INTO t(name) VALUES ('dangling')")
                }
            }
            #expect(error?.isMisuse == true)
            try await database.write { try $0.run("INSERT INTO t(name) VALUES ('next')") }
            #expect(try names(database) == ["next"])
        }
    }

    @Test func closeDrainsQueuedWritesThenRefusesMore() async throws {
        try await withDatabase { database, path in
            let gate = WriterGate()
            defer { gate.open() }
            async let blocker: Void = database.write { _ in gate.block() }
            try #require(try await eventually { gate.isEntered })
            let writes = (0..<10).map { index in
                Task { try await database.write { try $0.run("INSERT INTO t(name) VALUES (?)", [.text("q\(index)")]) } }
            }
            try #require(try await eventually { database.writerQueuedCount == 10 })
            // close() blocks: on a thread of its own, not one of the cooperative pool's two.
            let closing = Task { try await onOwnThread("close") { database.close() } }
            try #require(try await eventually { !database.writerIsAccepting })
            // Refused while close() drains what was queued before it.
            await #expect(throws: SQLiteError.self) { _ = try await database.write { _ in 1 } }
            gate.open()
            try await closing.value
            try await blocker
            for write in writes { _ = try await write.value }

            let error = await #expect(throws: SQLiteError.self) { _ = try await database.write { _ in 1 } }
            #expect(error?.isMisuse == true)
            #expect(error?.message.contains("closed") == true)
            #expect(throws: SQLiteError.self) { try database.writeAndWait { _ in 1 } }
            #expect(throws: SQLiteError.self) { try database.read { _ in 1 } }
            #expect(!database.ping())
            database.close() // idempotent

            // Checkpointed on close: the WAL is gone (or empty) and the rows are in the main file.
            let wal = try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
            #expect(wal == nil || wal == 0)
            let reopened = try Database(path: path)
            defer { reopened.close() }
            #expect(try count(reopened) == 10)
        }
    }

    @Test func closeFromInsideAWriteDoesNotDeadlock() async throws {
        try await withDatabase { database, path in
            try await database.write { connection in
                try connection.run("INSERT INTO t(name) VALUES ('last')")
                database.close()
            }
            await #expect(throws: SQLiteError.self) { _ = try await database.write { _ in 1 } }
            let reopened = try Database(path: path)
            defer { reopened.close() }
            #expect(try names(reopened) == ["last"])
        }
    }

    @Test func anAwaitedWriteIsSeenByAFreshDatabase() async throws {
        try await withDatabase { database, path in
            try await database.write { try $0.run("INSERT INTO t(name) VALUES ('durable')") }
            let other = try Database(path: path, readers: 1)
            defer { other.close() }
            #expect(try names(other) == ["durable"])
        }
    }

    @Test func foreignKeysAreEnforced() async throws {
        try await withDatabase { database, _ in
            try await database.write {
                try $0.execute("CREATE TABLE child(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL REFERENCES t(id))")
            }
            let error = await #expect(throws: SQLiteError.self) {
                try await database.write { try $0.run("INSERT INTO child(parent) VALUES (42)") }
            }
            #expect(error?.isForeignKeyViolation == true)
        }
    }

    @Test func pingAnswers() async throws {
        try await withDatabase { database, _ in
            #expect(database.ping())
        }
    }
}
