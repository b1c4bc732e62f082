import PostgreSQL
import SQLite
@testable import Store
import Testing
import TestSupport

/// Each engine translates its driver's errors into `StoreError`: the domain code above catches
/// only that, whichever engine ran the call.
@Suite(.timeLimit(.minutes(2)))
struct StoreErrorTests {
    @Test(arguments: Engine.available)
    func aTakenUniqueKeyIsAUniqueViolationNamingItsConstraint(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let first = try await makeUser(store, sub: "sub-1")
            let second = try await makeUser(store, sub: "sub-2")
            try await store.engine.write { try $0.run("UPDATE users SET external_id = 'team-1' WHERE id = ?", [.text(first)]) }
            let error = await #expect(throws: StoreError.self) {
                try await store.engine.write { try $0.run("UPDATE users SET external_id = 'team-1' WHERE id = ?", [.text(second)]) }
            }
            guard case .uniqueViolation(let constraint) = error else {
                Issue.record("expected a unique violation, got \(String(describing: error))")
                return
            }
            // PostgreSQL names the index (users_external_id), SQLite the column (users.external_id).
            #expect(constraint.contains("external_id"))
            // The refused write changed nothing.
            let holders = try await store.engine.read { try $0.query("SELECT id FROM users WHERE external_id = 'team-1'").map { try $0.string(0) } }
            #expect(holders == [first])
        }
    }

    @Test(arguments: Engine.available)
    func aStatementTheDatabaseRefusesIsAnInvariantError(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let error = await #expect(throws: StoreError.self) {
                try await store.engine.write { try $0.run("INSERT INTO no_such_table VALUES (1)") }
            }
            guard case .invariant = error else {
                Issue.record("expected an invariant error, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func aSQLiteDatabaseLockedByAnotherProcessIsUnavailable() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/siwa.sqlite3"
            let store = try Store(path: path, busyTimeout: .milliseconds(20)) { testDataKey }
            defer { store.close() }
            let other = try Connection(path: path)
            try other.execute("BEGIN IMMEDIATE")
            await #expect(throws: StoreError.unavailable(reason: "the database is locked by another process")) {
                _ = try await makeUser(store)
            }
            try other.execute("ROLLBACK")
            _ = try await makeUser(store)
        }
    }

    @Test func aFailedSyncOfTheSQLiteWALIsUnavailableAndOtherIOErrorsAreNot() {
        // SQLITE_IOERR (10) and SQLITE_IOERR_FSYNC (10 | 4 << 8), which the WAL syncer reports.
        let failedSync = SQLiteError(code: 10, extendedCode: 10 | 4 << 8, message: "fsync of the WAL failed: I/O error")
        #expect(SQLiteEngine.translated(failedSync) == .unavailable(reason: "fsync of the WAL failed: I/O error"))
        #expect(!SQLiteEngine.translated(SQLiteError(code: 10, message: "disk I/O error")).isUnavailable)
    }

    @Test func aPostgreSQLServerThatCannotBeReachedIsUnavailable() throws {
        // Nothing listens on port 1: the connection is refused before any query.
        #expect(throws: StoreError.unavailable(reason: "the database cannot be reached")) {
            try Store.open("postgresql://siwa@127.0.0.1:1/siwa?connect_timeout=2", connections: 1) { testDataKey }
        }
    }

    @Test func postgreSQLOutagesAndOverloadAreUnavailable() {
        for code in ["08006", "08001", "57P01", "57P03"] {
            #expect(PostgresEngine.translated(PostgresError(code: code, message: "gone")).isUnavailable)
        }
        #expect(PostgresEngine.translated(PostgresError(code: "23505", message: "duplicate", constraint: "users_email"))
            == .uniqueViolation(constraint: "users_email"))
        #expect(!PostgresEngine.translated(PostgresError(code: "08P01", message: "protocol")).isUnavailable)
    }
}
