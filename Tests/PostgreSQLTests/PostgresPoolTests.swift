@testable import PostgreSQL
import Glibc
import Synchronization
import Testing
import TestSupport

@Suite(.enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"), .timeLimit(.minutes(1)))
struct PostgresPoolTests {
    /// Bodies running at once, and the most seen.
    private final class Concurrency: Sendable {
        private let running = Atomic<Int>(0)
        private let highest = Atomic<Int>(0)

        func enter() { highest.max(running.add(1, ordering: .relaxed).newValue, ordering: .relaxed) }
        func leave() { running.subtract(1, ordering: .relaxed) }
        var most: Int { highest.load(ordering: .relaxed) }

        /// Blocks the (worker) thread until `count` bodies have been in at once, or 30 s (a bound
        /// on failure: polling, since the body must block its thread as libpq does).
        func waitForOverlap(_ count: Int) {
            let deadline = ContinuousClock.now + .seconds(30)
            while most < count, ContinuousClock.now < deadline { usleep(1000) }
        }
    }

    /// Holds a pool worker inside a body until the test opens it (or 30 s pass, a bound on
    /// failure), blocking its thread as libpq does.
    private final class Gate: Sendable {
        private let entered = Atomic<Bool>(false)
        private let opened = Atomic<Bool>(false)

        var isEntered: Bool { entered.load(ordering: .relaxed) }
        func open() { opened.store(true, ordering: .relaxed) }

        func enterAndWait() {
            entered.store(true, ordering: .relaxed)
            let deadline = ContinuousClock.now + .seconds(30)
            while !opened.load(ordering: .relaxed), ContinuousClock.now < deadline { usleep(1000) }
        }
    }

    @Test func runsClosuresConcurrentlyButNoMoreThanItsSize() async throws {
        let pool = try PostgresPool(try await PostgresCluster.shared().makeDatabase(), size: 3)
        defer { pool.close() }
        let concurrency = Concurrency()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<9 {
                group.addTask {
                    try await pool.withConnection { connection in
                        concurrency.enter()
                        defer { concurrency.leave() }
                        // Bodies block their threads (as libpq does): three must be in here at
                        // once, and no fourth can join them. The query's pause only keeps the
                        // body busy a little longer; the counts hold for any length of it.
                        concurrency.waitForOverlap(3)
                        return try connection.queryOne("SELECT $1::int8 FROM pg_sleep(0.02)", [.integer(Int64(index))])?.int(0) ?? -1
                    }
                }
            }
            var results: [Int] = []
            for try await result in group { results.append(result) }
            #expect(results.sorted() == Array(0..<9))
        }
        #expect(concurrency.most == 3)
        #expect(pool.openedConnectionCount == 3)
    }

    @Test func aFullWaitQueueTurnsCallersAwayAtOnce() async throws {
        let pool = try PostgresPool(try await PostgresCluster.shared().makeDatabase(), size: 1, maxWaiting: 2)
        defer { pool.close() }
        let gate = Gate()
        let holder = Task { try await pool.withConnection { _ in gate.enterAndWait() } }
        #expect(try await eventually { gate.isEntered })
        let waiting = (0..<2).map { _ in Task { try await pool.withConnection { try $0.queryOne("SELECT 1")?.int(0) } } }
        #expect(try await eventually { pool.waitingCount == 2 })
        let error = await #expect(throws: PostgresError.self) { try await pool.withConnection { _ in 0 } }
        #expect(error?.isPoolExhausted == true)
        gate.open()
        try await holder.value
        for task in waiting { #expect(try await task.value == 1) }
    }

    @Test func transactionRollsBackOnThrowAndAnOpenTransactionIsNotLeaked() async throws {
        struct Abandon: Error {}
        let pool = try PostgresPool(try await PostgresCluster.shared().makeDatabase(), size: 1)
        defer { pool.close() }
        try await pool.withConnection { try $0.execute("CREATE TABLE t(x int)") }
        await #expect(throws: Abandon.self) {
            try await pool.transaction { connection in
                try connection.run("INSERT INTO t VALUES (1)")
                throw Abandon()
            }
        }
        let leaked = await #expect(throws: PostgresError.self) {
            try await pool.withConnection { connection in
                try connection.execute("BEGIN; INSERT INTO t VALUES (2)")
            }
        }
        #expect(leaked?.code == "25001")
        // The same (only) connection is out of any transaction again, and nothing was kept.
        #expect(try await pool.withConnection { ($0.isInTransaction, try $0.queryOne("SELECT count(*) FROM t")?.int(0)) } == (false, 0))
    }

    @Test func recoversAfterTheServerRestartsAndFailsFastWhileItIsDown() async throws {
        let cluster = try await PostgresCluster.start()
        do {
            let pool = try PostgresPool(
                try await cluster.makeDatabase(), size: 2, connectTimeout: .seconds(2),
                reconnect: ReconnectBackoff(initial: .milliseconds(20), maximum: .milliseconds(200))
            )
            defer { pool.close() }
            let select = { @Sendable in try await pool.withConnection { try $0.queryOne("SELECT 1")?.int(0) } }
            #expect(try await select() == 1)

            // A restart ends every connection; the pool notices idle ones before using them.
            try await cluster.restart()
            for _ in 0..<4 { #expect(try await select() == 1) }

            try await cluster.pause()
            for _ in 0..<5 {
                let error = await #expect(throws: PostgresError.self) { try await select() }
                #expect(error?.isConnectionFailure == true)
                // Refused (the attempt's own "connection refused", or the back-off's "next attempt
                // in"), not left waiting for the 2 s connect timeout. (Said by the error, not
                // timed: a loaded machine can take seconds over anything.)
                #expect(error.map { !$0.message.lowercased().contains("timeout") } == true, "\(String(describing: error))")
            }
            try await cluster.resume()
            // Back once the back-off allows an attempt (at most 200 ms here), same pool.
            #expect(try await eventually { (try? await select()) == 1 })
        }
        try await cluster.stop()
    }

    @Test func aBackendKilledMidUseIsReplaced() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        let pool = try PostgresPool(url, size: 1)
        defer { pool.close() }
        let pid = try await pool.withConnection { $0.backendProcessID }
        let killer = try PostgresConnection(url)
        #expect(try killer.queryOne("SELECT pg_terminate_backend($1::int)", [.integer(Int64(pid))])?.bool(0) == true)
        // Once the backend is gone its FATAL and end of file are in the pool's socket, and the
        // idle check drops the connection.
        #expect(try await eventually {
            try killer.queryOne("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int", [.integer(Int64(pid))])?.int(0) == 0
        })
        let next = try await pool.withConnection { $0.backendProcessID }
        #expect(next != pid)
        #expect(pool.openedConnectionCount == 2)
    }

    @Test func unreachableServerFailsWithAConnectionFailure() async throws {
        // A port nothing listens on: refused at once.
        let pool = try PostgresPool("postgres://siwa@127.0.0.1:1/siwa", size: 1)
        defer { pool.close() }
        let error = await #expect(throws: PostgresError.self) { try await pool.withConnection { _ in 1 } }
        #expect(error?.isConnectionFailure == true)
        #expect(await !pool.ping())
    }
}
