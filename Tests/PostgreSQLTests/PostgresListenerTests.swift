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
        #expect(try await eventually(within: .seconds(1)) { events.payloads == ["ended:42"] })
        print("PostgresListener: NOTIFY delivered in \(ContinuousClock.now - sent)")
        try await pool.notify(channel: "Other Channel", payload: "x'; --")
        try await pool.notify(channel: "unheard", payload: "nobody")
        #expect(try await eventually(within: .seconds(1)) { events.payloads == ["ended:42", "x'; --"] })

        // A NOTIFY in a transaction arrives at COMMIT, and never on rollback.
        struct Abandon: Error {}
        try? await pool.transaction { connection in
            try connection.notify(channel: "sessions", payload: "rolled back")
            throw Abandon()
        }
        try await pool.transaction { try $0.notify(channel: "sessions", payload: "committed") }
        #expect(try await eventually(within: .seconds(1)) { events.payloads.last == "committed" })
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
        #expect(try await eventually(within: .seconds(1)) { events.payloads.last == "after reconnect" })
    }

    @Test func closeReturnsPromptlyWhileDisconnected() async throws {
        let events = Events()
        let listener = try PostgresListener("postgres://siwa@127.0.0.1:1/siwa", channels: ["c"]) { events.record($0) }
        #expect(try await eventually { !events.all.withLock { $0.isEmpty } })
        let started = ContinuousClock.now
        listener.close()
        #expect(ContinuousClock.now - started < .milliseconds(1500))
        #expect(events.listeningCount == 0)
    }
}
