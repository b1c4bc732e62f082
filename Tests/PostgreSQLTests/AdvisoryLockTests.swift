@testable import PostgreSQL
import Testing
import TestSupport

@Suite(.enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"), .timeLimit(.minutes(1)))
struct AdvisoryLockTests {
    @Test func aHeldLockExcludesASecondHolderUntilReleased() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        let first = try PostgresConnection(url)
        let second = try PostgresConnection(url)
        let key = PostgresConnection.advisoryLockKey("siwa-migrations")
        try first.withAdvisoryLock(key) { _ throws in
            #expect(try !second.tryAdvisoryLock(key))
        }
        #expect(try second.tryAdvisoryLock(key))
        #expect(try !first.tryAdvisoryLock(key))
        #expect(try second.unlockAdvisoryLock(key))
        #expect(try !second.unlockAdvisoryLock(key))
    }

    @Test func aWaitingHolderGetsTheLockWhenTheFirstCloses() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        let pool = try PostgresPool(url, size: 2)
        defer { pool.close() }
        let key: Int64 = 42
        let holder = try PostgresConnection(url)
        #expect(try holder.tryAdvisoryLock(key))
        let waiter = Task { try await pool.withConnection { try $0.withAdvisoryLock(key) { _ in ContinuousClock.now } } }
        // Once the server shows the waiter queued for the lock (this database's only one).
        #expect(try await eventually {
            try holder.queryOne(
                "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted"
            )?.int(0) == 1
        })
        let released = ContinuousClock.now
        // A holder that dies releases its lock with its session.
        holder.close()
        #expect(try await waiter.value >= released)
    }
}

struct AdvisoryLockKeyTests {
    @Test func keysFromNamesAreStable() {
        // FNV-1a 64 of "a" (a published test vector), so every instance and version agrees.
        #expect(PostgresConnection.advisoryLockKey("a") == Int64(bitPattern: 0xAF63_DC4C_8601_EC8C))
        #expect(PostgresConnection.advisoryLockKey("siwa-migrations") != PostgresConnection.advisoryLockKey("siwa-migration"))
    }
}
