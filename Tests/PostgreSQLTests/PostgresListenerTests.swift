import Glibc
@testable import PostgreSQL
import Synchronization
import Testing
import TestSupport

@Suite(.enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"), .timeLimit(.minutes(1)))
struct PostgresListenerTests {
    /// Collects a listener's events for the test to wait on.
    private final class Events: Sendable {
        let all = Mutex<[PostgresListener.Event]>([])

        func record(_ event: PostgresListener.Event) { all.withLock { $0.append(event) } }

        var listeningCount: Int {
            all.withLock { $0.filter { if case .listening = $0 { true } else { false } }.count }
        }

        var confirmedCount: Int {
            all.withLock { $0.filter { if case .confirmed = $0 { true } else { false } }.count }
        }

        var disconnections: [PostgresError] {
            all.withLock { $0.compactMap { if case .disconnected(let error) = $0 { error } else { nil } } }
        }

        var payloads: [String] {
            all.withLock { $0.compactMap { if case .notification(let note) = $0 { note.payload } else { nil } } }
        }
    }

    @Test func deliversNotificationsAndListensAgainAfterItsConnectionIsKilled() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        let events = Events()
        let name = "listener-test"
        let listener = try PostgresListener(url, channels: ["sessions", "Other Channel"], applicationName: name) { events.record($0) }
        defer { listener.close() }
        let pool = try PostgresPool(url, size: 1)
        defer { pool.close() }
        #expect(try await eventually { events.listeningCount == 1 })

        let sent = ContinuousClock.now
        try await pool.notify(channel: "sessions", payload: "ended:42")
        #expect(try await eventually { events.payloads == ["ended:42"] })
        print("PostgresListener: NOTIFY delivered in \(ContinuousClock.now - sent)")
        try await pool.notify(channel: "Other Channel", payload: "x'; --")
        try await pool.notify(channel: "unheard", payload: "nobody")
        #expect(try await eventually { events.payloads == ["ended:42", "x'; --"] })

        // A NOTIFY in a transaction arrives at COMMIT, and never on rollback.
        struct Abandon: Error {}
        try? await pool.transaction { connection in
            try connection.notify(channel: "sessions", payload: "rolled back")
            throw Abandon()
        }
        try await pool.transaction { try $0.notify(channel: "sessions", payload: "committed") }
        #expect(try await eventually { events.payloads.last == "committed" })
        #expect(!events.payloads.contains("rolled back"))

        let killed = try await pool.withConnection { connection in
            try connection.queryOne(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", [.text(name)]
            )?.int(0)
        }
        #expect(killed == 1)
        #expect(try await eventually {
            events.all.withLock { $0.contains { if case .disconnected = $0 { true } else { false } } } && events.listeningCount == 2
        })
        try await pool.notify(channel: "sessions", payload: "after reconnect")
        #expect(try await eventually { events.payloads.last == "after reconnect" })
    }

    /// A connection that goes silent without breaking (its server process stopped here; a
    /// half-open network alike) is found out by the round trips that confirm it: the listener
    /// gives it up once its last confirmation is `confirmWithin` old, and listens again on a
    /// new connection, long before TCP would notice anything.
    @Test func aListenerWhoseServerProcessStopsAnsweringListensAgainOnANewConnection() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        let events = Events()
        let listener = try PostgresListener(url, channels: ["sessions"], confirmEvery: .milliseconds(50), confirmWithin: .milliseconds(500)) {
            events.record($0)
        }
        defer { listener.close() }
        let pool = try PostgresPool(url, size: 1)
        defer { pool.close() }
        #expect(try await eventually { events.listeningCount == 1 })
        #expect(try await eventually { events.confirmedCount >= 3 }, "confirmed again and again while it answers")
        #expect(events.disconnections.isEmpty)

        let stalled = try #require(listener.backendProcessID)
        #expect(kill(stalled, SIGSTOP) == 0)
        // Always let it go on, whatever happens here.
        defer { kill(stalled, SIGCONT) }
        let stoppedAt = ContinuousClock.now
        #expect(try await eventually(within: .seconds(5)) { events.listeningCount == 2 })
        print("PostgresListener: listening again \(ContinuousClock.now - stoppedAt) after its server process stopped")
        #expect(events.disconnections.map(\.message) == ["the listening connection did not answer within 0.5 seconds"])
        #expect(events.disconnections.first?.isConnectionFailure == true)
        let current = try #require(listener.backendProcessID)
        #expect(current != stalled)
        try await pool.notify(channel: "sessions", payload: "heard on the new connection")
        #expect(try await eventually(within: .seconds(1)) { events.payloads == ["heard on the new connection"] })
        let confirmed = events.confirmedCount
        #expect(try await eventually { events.confirmedCount > confirmed }, "and confirmed again")
    }

    /// A fresh database, a listener on `sessions` that listens already, and a pool to send with.
    private func listeningOnSessions() async throws -> (Events, PostgresListener, PostgresPool) {
        let url = try await PostgresCluster.shared().makeDatabase()
        let events = Events()
        let listener = try PostgresListener(url, channels: ["sessions"]) { events.record($0) }
        let pool = try PostgresPool(url, size: 1)
        #expect(try await eventually { events.listeningCount == 1 })
        return (events, listener, pool)
    }

    /// A notification may ride in a transaction's COMMIT message: it is heard after the
    /// transaction's own, with its payload as given (quoted, never spliced into the SQL), and
    /// not at all when the body throws (it is not even asked for) or the COMMIT fails.
    @Test func aNotificationSentWithTheCommitComesAfterTheTransactionsOwn() async throws {
        let (events, listener, pool) = try await listeningOnSessions()
        defer {
            listener.close()
            pool.close()
        }

        let marker = PostgresConnection.CommitNotification(channel: "sessions", payload: "w:it's; -- $1")
        try await pool.transaction(.readCommitted, { try $0.notify(channel: "sessions", payload: "own") }, notifyingAtCommit: { marker })
        #expect(try await eventually { events.payloads == ["own", "w:it's; -- $1"] })

        final class Asked: Sendable {
            private let value = Atomic<Bool>(false)
            func set() { value.store(true, ordering: .relaxed) }
            var isSet: Bool { value.load(ordering: .relaxed) }
        }
        let asked = Asked()
        struct Abandon: Error {}
        await #expect(throws: Abandon.self) {
            try await pool.transaction(.readCommitted, { _ in throw Abandon() }, notifyingAtCommit: {
                asked.set()
                return .init(channel: "sessions", payload: "after a throw")
            })
        }
        #expect(!asked.isSet)

        // A deferred constraint fails the COMMIT itself, after the notification was queued.
        try await pool.withConnection { try $0.execute("CREATE TABLE deferred_check(x integer UNIQUE DEFERRABLE INITIALLY DEFERRED)") }
        await #expect(throws: PostgresError.self) {
            try await pool.transaction(.readCommitted, { try $0.run("INSERT INTO deferred_check VALUES (1), (1)") }, notifyingAtCommit: {
                .init(channel: "sessions", payload: "failed commit")
            })
        }
        try await pool.notify(channel: "sessions", payload: "after")
        #expect(try await eventually { events.payloads.last == "after" })
        #expect(events.payloads == ["own", "w:it's; -- $1", "after"])
    }

    /// A notification with a condition is sent only when the condition holds in the transaction
    /// at COMMIT, and the caller learns which it was; the transaction commits either way.
    @Test func aConditionalCommitNotificationIsSentOnlyWhenItsConditionHolds() async throws {
        let (events, listener, pool) = try await listeningOnSessions()
        defer {
            listener.close()
            pool.close()
        }
        try await pool.withConnection { try $0.execute("CREATE TABLE flagged(x integer)") }

        final class Outcomes: Sendable {
            let sent = Mutex<[Bool]>([])
        }
        let outcomes = Outcomes()
        let condition = "current_setting('test.flag', true) = 'on'"
        for (value, flag) in [(1, false), (2, true)] {
            try await pool.transaction(.readCommitted, { connection in
                try connection.run("INSERT INTO flagged VALUES ($1)", [.integer(Int64(value))])
                if flag { try connection.execute("SELECT set_config('test.flag', 'on', true)") }
            }, notifyingAtCommit: {
                .init(channel: "sessions", payload: "marker \(value)", condition: condition)
            }, notified: { sent in outcomes.sent.withLock { $0.append(sent) } })
        }
        // The flag is the transaction's own: a later transaction without it sends nothing.
        _ = try await pool.transaction(.readCommitted, { try $0.run("INSERT INTO flagged VALUES (3)") }, notifyingAtCommit: {
            .init(channel: "sessions", payload: "marker 3", condition: condition)
        }, notified: { sent in outcomes.sent.withLock { $0.append(sent) } })
        // Without a condition it always goes, even from a body that sent nothing (its BEGIN
        // then goes in the COMMIT's message, and its result comes first).
        try await pool.transaction(.readCommitted, { _ in }, notifyingAtCommit: {
            .init(channel: "sessions", payload: "marker 4")
        }, notified: { sent in outcomes.sent.withLock { $0.append(sent) } })
        try await pool.notify(channel: "sessions", payload: "after")
        #expect(try await eventually { events.payloads.last == "after" })
        #expect(events.payloads == ["marker 2", "marker 4", "after"])
        #expect(outcomes.sent.withLock { $0 } == [false, true, false, true])
        let stored = try await pool.withConnection { try $0.query("SELECT x FROM flagged ORDER BY x").map { try $0.int(0) } }
        #expect(stored == [1, 2, 3])
    }

    @Test func closeCutsShortTheWaitBeforeAReconnect() async throws {
        let events = Events()
        // After its first refused connect the listener waits an hour before the next: close()
        // must cut that wait short. Were it to sit out the wait, the suite's one-minute limit
        // would end the test.
        let listener = try PostgresListener(
            "postgres://siwa@127.0.0.1:1/siwa", channels: ["c"], reconnect: ReconnectBackoff(initial: .seconds(3_600), maximum: .seconds(3_600))
        ) { events.record($0) }
        #expect(try await eventually { !events.all.withLock { $0.isEmpty } })
        try await onOwnThread { listener.close() }
        #expect(events.listeningCount == 0)
    }
}
