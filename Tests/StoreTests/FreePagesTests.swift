import SQLite
@testable import Store
import Testing

/// Deleted rows give their space back (issue 9: clients not signed in could grow the file).
@Suite struct FreePagesTests {
    private func pragma(_ database: Database, _ name: String) throws -> Int {
        try database.read { try $0.queryOne("PRAGMA \(name)")?.int(0) ?? -1 }
    }

    @Test func aNewDatabaseIsIncrementalAndHousekeepingShrinksTheFile() async throws {
        try await withTemporaryFolder { folder in
            let database = try StoreOpener.open(path: folder + "/siwa.sqlite3")
            defer { database.close() }
            #expect(try pragma(database, "auto_vacuum") == 2)
            let store = WebSignInStore(engine: SQLiteEngine(database: database))
            let returnTo = "/" + String(repeating: "r", count: 2_000)
            for _ in 0..<2_000 { _ = try await store.start(returnTo: returnTo, now: 0) }
            let grown = try pragma(database, "page_count")
            #expect(try await store.prune(now: WebSignInStore.lifetime) == 2_000)
            #expect(try pragma(database, "freelist_count") > 0)
            try await FreePages.reclaim(database, maxPages: 100_000)
            #expect(try pragma(database, "freelist_count") == 0)
            #expect(try pragma(database, "page_count") < grown / 4)
        }
    }

    @Test func aDatabaseMadeBeforeTheModeIsConvertedOnce() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/old.sqlite3"
            let old = try Database(path: path, readers: 1)
            try old.writeAndWait { try $0.execute("CREATE TABLE kept(value TEXT); INSERT INTO kept VALUES ('still here')") }
            #expect(try pragma(old, "auto_vacuum") == 0)
            old.close()
            let database = try StoreOpener.open(path: path)
            defer { database.close() }
            #expect(try pragma(database, "auto_vacuum") == 2)
            #expect(try database.read { try $0.queryOne("SELECT value FROM kept")?.string(0) } == "still here")
        }
    }
}
