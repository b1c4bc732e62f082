import Foundation
@testable import SQLite
import Synchronization
import Testing
import TestSupport

/// With `.full`, a write's caller resumes only after the WAL holding its batch was fsynced by the
/// sync thread, while the writer thread goes on with the next batch.
@Suite struct WALSyncTests {
    /// A `.full` database with table `t(id, name)`, closed after `body`.
    private func withDatabase(_ body: (Database, String) async throws -> Void) async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/test.sqlite3"
            let database = try Database(path: path)
            defer { database.close() }
            try await database.write { try $0.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL)") }
            try await body(database, path)
        }
    }

    private func insert(_ name: String, into database: Database) async throws {
        try await database.write { try $0.run("INSERT INTO t(name) VALUES (?)", [.text(name)]) }
    }

    private func count(_ database: Database) throws -> Int {
        try database.read { try $0.queryOne("SELECT count(*) FROM t")?.int(0) ?? -1 }
    }

    /// Holds the syncs of `syncer` at the gate until `release`.
    private func holdSyncs(_ syncer: WALSyncer, at gate: WriterGate) {
        syncer.beforeSync.withLock { $0 = { gate.block(); return 0 } }
    }

    private func release(_ syncer: WALSyncer, _ gate: WriterGate) {
        syncer.beforeSync.withLock { $0 = nil }
        gate.open()
    }

    @Test func aWriteResumesOnlyOnceTheWALIsSynced() async throws {
        try await withDatabase { database, _ in
            let syncer = try #require(database.syncer)
            let gate = WriterGate()
            holdSyncs(syncer, at: gate)
            defer { release(syncer, gate) }
            let syncsBefore = syncer.syncCount
            let resumed = Atomic(false)
            let write = Task {
                try await insert("ada", into: database)
                resumed.store(true, ordering: .releasing)
            }
            #expect(try await eventually { gate.isEntered })
            // Committed, and readable by other connections, but not yet told to its caller.
            #expect(try count(database) == 1)
            let resumedWhileHeld = resumed.load(ordering: .acquiring)
            #expect(!resumedWhileHeld)
            release(syncer, gate)
            try await write.value
            let resumedAfter = resumed.load(ordering: .acquiring)
            #expect(resumedAfter)
            #expect(syncer.syncCount == syncsBefore + 1)
        }
    }

    @Test func theWriterGoesOnWhileASyncRunsAndAWriteThatReadAnUnsyncedRowWaitsForTheNextSync() async throws {
        try await withDatabase { database, _ in
            let syncer = try #require(database.syncer)
            let gate = WriterGate()
            holdSyncs(syncer, at: gate)
            defer { release(syncer, gate) }
            let commitsBefore = database.writerCommitCount
            let first = Task { try await insert("ada", into: database) }
            #expect(try await eventually { gate.isEntered })
            // The way an outbox claims: a write that reads what the held batch wrote.
            let secondResumed = Atomic(false)
            let second = Task {
                let seen = try await database.write { try $0.queryOne("SELECT count(*) FROM t")?.int(0) ?? -1 }
                secondResumed.store(true, ordering: .releasing)
                return seen
            }
            // The writer committed the second batch while the first one's sync was held.
            #expect(try await eventually { database.writerCommitCount == commitsBefore + 2 })
            let secondResumedWhileHeld = secondResumed.load(ordering: .acquiring)
            #expect(!secondResumedWhileHeld)
            let syncsBefore = syncer.syncCount
            release(syncer, gate)
            try await first.value
            #expect(try await second.value == 1)
            // The second caller resumed after a sync that began once its batch was committed.
            #expect(syncer.syncCount >= syncsBefore + 2)
        }
    }

    @Test func aFailedSyncFailsTheWritesItCoveredAndTheNextSyncWorks() async throws {
        try await withDatabase { database, _ in
            let syncer = try #require(database.syncer)
            let calls = Atomic(0)
            syncer.beforeSync.withLock { $0 = { calls.add(1, ordering: .relaxed).oldValue == 0 ? EIO : 0 } }
            await #expect {
                try await insert("ada", into: database)
            } throws: { error in
                guard let error = error as? SQLiteError else { return false }
                return error.extendedCode == SQLiteError.ioErrorFsync && error.message.contains("fsync of the WAL failed")
            }
            try await insert("grace", into: database)
            let syncs = calls.load(ordering: .relaxed)
            #expect(syncs == 2)
            // The failed one was committed: its caller was only not told it was durable.
            #expect(try count(database) == 2)
        }
    }

    @Test func closingSyncsAndResumesTheLastWritesBeforeTheFileCloses() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/test.sqlite3"
            let database = try Database(path: path)
            try await database.write { try $0.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL)") }
            let syncer = try #require(database.syncer)
            let gate = WriterGate()
            holdSyncs(syncer, at: gate)
            defer { release(syncer, gate) }
            let write = Task { try await insert("ada", into: database) }
            #expect(try await eventually { gate.isEntered })
            let closing = Task.detached { database.close() }
            release(syncer, gate)
            try await write.value
            await closing.value
            let reopened = try Database(path: path)
            defer { reopened.close() }
            #expect(try count(reopened) == 1)
        }
    }

    @Test func withoutFullACommitIsTheEndOfAWrite() async throws {
        try await withTemporaryFolder { folder in
            let database = try Database(path: folder + "/test.sqlite3", synchronous: .normal)
            defer { database.close() }
            #expect(database.syncer == nil)
            try await database.write { try $0.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL)") }
            try await insert("ada", into: database)
            #expect(try count(database) == 1)
        }
    }
}
