import SQLite
import Store

/// Runs `body` with a freshly migrated database in a folder of its own.
func withDatabase<T>(_ body: (Database) async throws -> T) async throws -> T {
    try await withTemporaryFolder { folder in
        let database = try StoreOpener.open(path: folder + "/siwa.sqlite3", readers: 2)
        defer { database.close() }
        return try await body(database)
    }
}

/// Creates a user for `sub` (no email, no name) and returns its id.
func makeUser(_ database: Database, sub: String = "001234.abcd.0123", now: Int64 = 1_000) async throws -> String {
    try await database.write { connection in
        try UserStore.upsertOnSignIn(in: connection, identity: VerifiedIdentity(appleSub: sub), profile: nil, now: now).user.id
    }
}
