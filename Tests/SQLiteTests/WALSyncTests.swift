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

    @Test func aFailedSyncEndsWritingUntilARestart() async throws {
        try await withDatabase { database, path in
            let syncer = try #require(database.syncer)
            syncer.beforeSync.withLock { $0 = { EIO } }
            let failedSync: (any Error) -> Bool = { error in
                guard let error = error as? SQLiteError else { return false }
                return error.isFailedSync && error.message.contains("fsync of the WAL failed") && error.message.contains("no more writes")
            }
            await #expect(performing: { try await insert("ada", into: database) }, throws: failedSync)
            syncer.beforeSync.withLock { $0 = nil }
            // The kernel may have dropped what it could not write: no later write is promised.
            await #expect(performing: { try await insert("grace", into: database) }, throws: failedSync)
            #expect(!database.ping())
            // The failed batch was committed (its callers were only not told it is durable); the
            // write after it never ran.
            #expect(try count(database) == 1)
            database.close()
            let reopened = try Database(path: path)
            defer { reopened.close() }
            try await insert("grace", into: reopened)
            #expect(try count(reopened) == 2)
            #expect(reopened.ping())
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
            let closed = Atomic(false)
            // close() blocks: on a thread of its own, not one of the cooperative pool's two.
            let closing = Task {
                try await onOwnThread("close") {
                    database.close()
                    closed.store(true, ordering: .releasing)
                }
            }
            #expect(try await eventually { !database.writerIsAccepting })
            // Close waits for the held sync and the write it resumes.
            let closedWhileHeld = closed.load(ordering: .acquiring)
            #expect(!closedWhileHeld)
            release(syncer, gate)
            try await write.value
            try await closing.value
            let reopened = try Database(path: path)
            defer { reopened.close() }
            #expect(try count(reopened) == 1)
        }
    }

    @Test func theWriterCommitsWithNormalAndTheSyncerSyncsTheWALSQLiteNamesThroughASymlink() async throws {
        try await withTemporaryFolder { folder in
            try FileManager.default.createDirectory(atPath: folder + "/real", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: folder + "/link.sqlite3", withDestinationPath: folder + "/real/db.sqlite3")
            let database = try Database(path: folder + "/link.sqlite3")
            defer { database.close() }
            let syncer = try #require(database.syncer)
            // SQLite follows the link: its WAL lies beside the real file, and that is the one synced.
            #expect(syncer.walPath.hasSuffix("/real/db.sqlite3-wal"))
            let synchronous = try await database.write { connection in
                try connection.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
                return try connection.queryOne("PRAGMA synchronous")?.int(0)
            }
            #expect(synchronous == 1)
            try await insert("ada", into: database)
            #expect(FileManager.default.fileExists(atPath: syncer.walPath))
            #expect(!FileManager.default.fileExists(atPath: folder + "/link.sqlite3-wal"))
            #expect(syncer.syncCount >= 2)
            #expect(database.ping())
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
