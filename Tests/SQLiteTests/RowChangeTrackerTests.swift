@testable import SQLite
import Testing
import TestSupport

@Suite struct RowChangeTrackerTests {
    @Test func aCommitInvalidatesTheRowsItTouched() {
        let tracker = RowChangeTracker(tables: ["a", "b"])
        let row = RowChangeTracker.Row(table: 1, rowid: 42)
        let start = tracker.sequence
        let versions = try! #require(tracker.versions(of: [row], unchangedSince: start))
        #expect(tracker.isCurrent([row], versions: versions))
        // A different table's row with the same rowid is another slot.
        tracker.record([RowChangeTracker.Row(table: 0, rowid: 42)])
        #expect(tracker.isCurrent([row], versions: versions))
        tracker.record([row])
        #expect(!tracker.isCurrent([row], versions: versions))
        // A read that straddled a commit gets no versions to cache with.
        #expect(tracker.versions(of: [row], unchangedSince: start) == nil)
        #expect(tracker.versions(of: [row], unchangedSince: tracker.sequence) != nil)
    }

    @Test func theWriterReportsChangesInTrackedTablesOnly() async throws {
        try await withTemporaryFolder { folder in
            let database = try Database(path: folder + "/t.sqlite3", readers: 1, trackedTables: ["tracked"])
            defer { database.close() }
            try await database.write { try $0.execute("CREATE TABLE tracked(x); CREATE TABLE other(x)") }
            let tracker = try #require(database.changes)
            let before = tracker.sequence
            try await database.write { _ = try $0.run("INSERT INTO other VALUES (1)") }
            #expect(tracker.sequence == before)
            try await database.write { _ = try $0.run("INSERT INTO tracked VALUES (1)") }
            #expect(tracker.sequence == before + 1)
            let row = RowChangeTracker.Row(table: 0, rowid: 1)
            let versions = try #require(tracker.versions(of: [row], unchangedSince: tracker.sequence))
            // A body that fails is rolled back, and its rows still count as changed (safe).
            await #expect(throws: (any Error).self) {
                try await database.write { connection in
                    _ = try connection.run("UPDATE tracked SET x = 2 WHERE rowid = 1")
                    throw Undo()
                }
            }
            #expect(!tracker.isCurrent([row], versions: versions))
        }
    }

    /// Another process's commit (a second `Database` on the file stands in for one) is not seen
    /// by the update hook; the writer notices it by `data_version` at its next check (every
    /// `foreignCommitCheckMilliseconds`) and every row counts as changed, while its own commits
    /// and idle time never do that. The test waits for checks to happen, not for time to pass.
    @Test func anotherConnectionsCommitMakesEveryRowStaleAtTheNextCheck() async throws {
        try await withTemporaryFolder { folder in
            let database = try Database(path: folder + "/t.sqlite3", readers: 1, trackedTables: ["tracked"])
            defer { database.close() }
            try await database.write { try $0.execute("CREATE TABLE tracked(x); INSERT INTO tracked VALUES (1)") }
            let tracker = try #require(database.changes)
            let row = RowChangeTracker.Row(table: 0, rowid: 1)
            let versions = try #require(tracker.versions(of: [row], unchangedSince: tracker.sequence))
            /// Until two checks more are over: the second began after this was called.
            func nextCheck() async throws -> Bool {
                let checks = database.writerForeignCommitChecks
                return try await eventually { database.writerForeignCommitChecks >= checks + 2 }
            }
            // Checks while idle, and after a commit of its own elsewhere: still current.
            #expect(try await nextCheck())
            try await database.write { try $0.execute("CREATE TABLE other(x)") }
            #expect(try await nextCheck())
            #expect(tracker.isCurrent([row], versions: versions))

            let other = try Database(path: folder + "/t.sqlite3", readers: 1)
            try await other.write { _ = try $0.run("INSERT INTO other VALUES (1)") }
            other.close()
            #expect(try await nextCheck())
            #expect(!tracker.isCurrent([row], versions: versions))
        }
    }
}

private struct Undo: Error {}
