import Foundation
@testable import SQLite
import Testing
import TestSupport

/// The WAL is copied back into the database file by the checkpointer's thread, not by the
/// writer inside a commit; the writer finishes a checkpoint itself only when the WAL reaches its
/// limit, so the WAL cannot grow without bound while writes never pause.
@Suite struct CheckpointTests {
    /// Bytes of one WAL frame of a 4 KiB page: a 24-byte header and the page.
    private static let frameBytes = 24 + 4_096
    /// A write rewriting this blob changes about 100 overflow pages: ~100 WAL frames.
    private static let blobBytes = 400_000

    private func withBlobDatabase(_ body: (Database, String) async throws -> Void) async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/test.sqlite3"
            let database = try Database(path: path)
            defer { database.close() }
            try await database.write {
                try $0.execute("CREATE TABLE blob(id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
                try $0.run("INSERT INTO blob(id, data) VALUES (1, zeroblob(1))")
            }
            try await body(database, path)
        }
    }

    private func rewriteBlob(_ database: Database) async throws {
        try await database.write { try $0.run("UPDATE blob SET data = randomblob(?) WHERE id = 1", [.integer(Int64(Self.blobBytes))]) }
    }

    private func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
    }

    @Test func passesRunOnTheCheckpointerThreadAndCopyTheWAL() async throws {
        try await withBlobDatabase { database, path in
            let before = try fileSize(path)
            // ~1,500 frames: past the first pass's threshold, short of the WAL's limit.
            for _ in 0..<15 { try await rewriteBlob(database) }
            #expect(try await eventually { database.checkpointer.passCount >= 1 })
            // The pass copied the blob's pages into the database file itself.
            #expect(try fileSize(path) >= before + Self.blobBytes)
            #expect(database.writerCheckpointCount == 0)
            #expect(try database.read { try $0.queryOne("SELECT length(data) FROM blob")?.int(0) } == Self.blobBytes)
        }
    }

    @Test func theWriterFinishesACheckpointWhenTheWALReachesItsLimit() async throws {
        try await withBlobDatabase { database, path in
            // A checkpointer that never gets to run stands for one that can never catch up
            // with writes arriving back to back.
            let gate = WriterGate()
            database.checkpointer.beforePass.withLock { $0 = { gate.block() } }
            // The hook goes first: a pass asked for meanwhile would block again, and close would
            // wait for it for ever.
            defer {
                database.checkpointer.beforePass.withLock { $0 = nil }
                gate.open()
            }
            let framesWritten = 3 * Writer.walFrameLimit
            for _ in 0..<(framesWritten / 100) { try await rewriteBlob(database) }
            #expect(database.writerCheckpointCount >= 2)
            // The WAL started over rather than holding every frame written: at most the limit
            // and the frames of the batch that crossed it.
            let walBytes = try fileSize(path + "-wal")
            #expect(walBytes <= (Writer.walFrameLimit + 200) * Self.frameBytes + 32)
            #expect(walBytes < framesWritten * Self.frameBytes / 2)
            #expect(try database.read { try $0.queryOne("SELECT length(data) FROM blob")?.int(0) } == Self.blobBytes)
        }
    }

    @Test func closingWithAPassAskedForLeavesAWholeFileAndAnEmptyWAL() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/test.sqlite3"
            let database = try Database(path: path)
            try await database.write {
                try $0.execute("CREATE TABLE blob(id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
                // ~1,200 frames in one commit: a pass is asked for as it ends.
                try $0.run("INSERT INTO blob(id, data) VALUES (1, randomblob(?))", [.integer(Int64(Self.blobBytes * 12))])
            }
            database.close()
            // The last connection to close removes the emptied WAL.
            let walPath = path + "-wal"
            #expect(try !FileManager.default.fileExists(atPath: walPath) || fileSize(walPath) == 0)
            let reopened = try Database(path: path, readers: 1)
            defer { reopened.close() }
            #expect(try reopened.read { try $0.queryOne("SELECT length(data) FROM blob")?.int(0) } == Self.blobBytes * 12)
        }
    }
}
