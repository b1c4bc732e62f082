import Foundation
import SQLite
import Testing

@Suite struct DatabaseFileTests {
    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test func createsFoldersWith0700AndFilesWith0600() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/data/nested/siwa.sqlite3"
            let database = try Database(path: path)
            defer { database.close() }
            try await database.write { try $0.execute("CREATE TABLE t(x)") }
            #expect(try mode(folder + "/data") == 0o700)
            #expect(try mode(folder + "/data/nested") == 0o700)
            #expect(try mode(path) == 0o600)
            // SQLite gives the WAL the database file's mode.
            #expect(try mode(path + "-wal") == 0o600)
        }
    }

    @Test func opensAnExistingFileWithoutChangingIt() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/siwa.sqlite3"
            do {
                let database = try Database(path: path)
                try await database.write { try $0.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
                database.close()
            }
            let database = try Database(path: path)
            defer { database.close() }
            #expect(try database.read { try $0.queryOne("SELECT x FROM t")?.int(0) } == 1)
        }
    }

    @Test func refusesAPathThatIsNotAFile() {
        #expect(throws: SQLiteError.self) { try Database(path: ":memory:") }
        #expect(throws: SQLiteError.self) { try Database(path: "") }
    }
}
