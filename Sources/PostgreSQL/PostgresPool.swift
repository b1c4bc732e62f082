import Glibc
import Synchronization
import SystemThread

/// A fixed number of PostgreSQL connections, each owned by a worker thread of its own.
///
/// libpq blocks the calling thread for every round trip, so the calls never run on Swift's
/// cooperative pool or an I/O loop: `withConnection` queues its body, suspends, and a worker
/// runs it on its connection. At most `size` bodies run at once; at most `maxWaiting` wait, and
/// further calls fail at once with `isPoolExhausted`.
///
/// Connections open on first use and reopen by themselves: one found broken is dropped, and
/// while PostgreSQL cannot be reached, attempts follow `ReconnectBackoff` and calls in between
/// fail at once with `isConnectionFailure` instead of waiting, until the server answers again.
public final class PostgresPool: Sendable {
    public let size: Int
    private let shared: Shared
    private let threads: Mutex<[pthread_t]>

    /// What the workers share; they hold this, not the pool, so dropping the pool closes it.
    private final class Shared: Sendable {
        let info: ConnectionInfo
        let connectTimeout: Duration
        let applicationName: String?
        let queue: PoolQueue
        let backoff: Mutex<ReconnectBackoff>
        let openedConnections = Atomic<Int>(0)

        init(info: ConnectionInfo, connectTimeout: Duration, applicationName: String?, maxWaiting: Int, backoff: ReconnectBackoff) {
            self.info = info
            self.connectTimeout = connectTimeout
            self.applicationName = applicationName
            queue = PoolQueue(capacity: maxWaiting)
            self.backoff = Mutex(backoff)
        }
    }

    /// Starts the worker threads; no connection is opened until a call needs one, so a server
    /// that is down at start-up only makes calls fail until it is up.
    /// - Parameters:
    ///   - connectionString: a libpq URL or `key=value` string; a malformed one throws here.
    ///   - size: connections, and so bodies running at once.
    ///   - maxWaiting: calls that may wait for a free connection.
    ///   - connectTimeout: per connection attempt (libpq counts whole seconds, at least 2).
    ///   - applicationName: shown in `pg_stat_activity` unless the string sets its own.
    public init(
        _ connectionString: String, size: Int = 4, maxWaiting: Int = 1024, connectTimeout: Duration = .seconds(5),
        applicationName: String? = nil, reconnect: ReconnectBackoff = ReconnectBackoff()
    ) throws {
        self.size = max(1, size)
        shared = Shared(
            info: try ConnectionInfo(connectionString), connectTimeout: connectTimeout, applicationName: applicationName,
            maxWaiting: maxWaiting, backoff: reconnect
        )
        threads = Mutex([])
        let shared = self.shared
        do {
            for index in 0..<self.size {
                let thread = try SystemThread.start(name: "siwa-pg-\(index)") { Self.work(shared) }
                threads.withLock { $0.append(thread) }
            }
        } catch {
            close()
            throw PostgresError(code: "58000", message: "cannot start the PostgreSQL pool's threads (\(error))")
        }
    }

    deinit {
        close()
    }

    // MARK: - Calls

    /// Runs `body` on a worker thread with a connection of its own for the duration, and
    /// returns its result. A transaction `body` leaves open is rolled back and reported. The
    /// body runs even if the calling task is cancelled after queuing it.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job = PendingJob(body: body) { continuation.resume(with: $0) }
            do {
                try shared.queue.submit(job)
            } catch {
                job.fail(error)
            }
        }
    }

    /// `withConnection` with `body` in one transaction: committed when it returns, rolled
    /// back when it throws.
    public func transaction<T: Sendable>(
        _ isolation: PostgresConnection.IsolationLevel = .readCommitted, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await withConnection { try $0.transaction(isolation, body) }
    }

    /// `PostgresConnection.transaction(_:_:notifyingAtCommit:notified:)` on a pooled connection.
    public func transaction<T: Sendable>(
        _ isolation: PostgresConnection.IsolationLevel = .readCommitted, _ body: @escaping @Sendable (PostgresConnection) throws -> T,
        notifyingAtCommit: @escaping @Sendable () -> PostgresConnection.CommitNotification?,
        notified: (@Sendable (Bool) -> Void)? = nil
    ) async throws -> T {
        try await withConnection { try $0.transaction(isolation, body, notifyingAtCommit: notifyingAtCommit, notified: notified) }
    }

    /// `PostgresConnection.notify` on a pooled connection, outside any transaction.
    public func notify(channel: String, payload: String) async throws {
        try await withConnection { try $0.notify(channel: channel, payload: payload) }
    }

    /// Whether the database answers a query (for readiness checks).
    public func ping() async -> Bool {
        (try? await withConnection { try $0.queryOne("SELECT 1")?.int(0) == 1 }) ?? false
    }

    /// Refuses new calls, lets the workers finish the queued ones, closes every connection and
    /// waits for the threads to end (except a worker calling this from inside a body, which
    /// cannot wait for itself). Idempotent.
    public func close() {
        shared.queue.close()
        let running = threads.withLock { threads in
            defer { threads = [] }
            return threads
        }
        let current = pthread_self()
        for thread in running {
            if pthread_equal(thread, current) != 0 {
                pthread_detach(thread)
            } else {
                pthread_join(thread, nil)
            }
        }
    }

    /// Connections opened so far, reopened ones included (for tests and diagnostics).
    var openedConnectionCount: Int { shared.openedConnections.load(ordering: .relaxed) }
    /// Calls waiting for a worker.
    var waitingCount: Int { shared.queue.waitingCount }

    // MARK: - Workers

    private static func work(_ shared: Shared) {
        var connection: PostgresConnection?
        while let job = shared.queue.next() {
            if let current = connection, !current.isAliveWhileIdle() {
                current.close()
                connection = nil
            }
            if connection == nil {
                switch connect(shared) {
                case .success(let opened):
                    connection = opened
                case .failure(let error):
                    job.fail(error)
                    continue
                }
            }
            guard let current = connection else { continue }
            job.run(on: current)
            if !current.isConnected {
                current.close()
                connection = nil
            }
        }
        connection?.close()
    }

    /// A new connection, or the error to fail the waiting call with: the attempt's own, or,
    /// while backing off, the last one's without trying.
    private static func connect(_ shared: Shared) -> Result<PostgresConnection, PostgresError> {
        let now = ContinuousClock.now
        let refusal = shared.backoff.withLock { backoff -> PostgresError? in
            guard !backoff.mayAttempt(at: now), let retryAt = backoff.retryAt else { return nil }
            let wait = (retryAt - now).components
            let milliseconds = wait.seconds * 1000 + wait.attoseconds / 1_000_000_000_000_000
            let cause = backoff.lastFailure.map { ": \($0.message)" } ?? ""
            return PostgresError(
                code: PostgresError.connectFailedCode,
                message: "PostgreSQL is unavailable, next attempt in \(milliseconds) ms\(cause)"
            )
        }
        if let refusal { return .failure(refusal) }
        do {
            let connection = try PostgresConnection(info: shared.info, connectTimeout: shared.connectTimeout, applicationName: shared.applicationName)
            shared.backoff.withLock { $0.succeeded() }
            shared.openedConnections.add(1, ordering: .relaxed)
            return .success(connection)
        } catch {
            shared.backoff.withLock { $0.failed(error, at: .now) }
            return .failure(error)
        }
    }
}
