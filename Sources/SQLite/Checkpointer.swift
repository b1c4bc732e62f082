#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite
import Synchronization
import SystemThread

/// Copies the WAL back into the database file on a thread and connection of its own, so the
/// writer never stops taking writes while pages are copied and the file is fsynced.
///
/// SQLite's automatic checkpoint runs inside the commit that crossed its threshold (1,000
/// frames), on the writer thread: every waiting caller then also waits for ~4 MB of page copies
/// and an fsync of the database file, and the hot pages of the batch are copied again each
/// time. Here the writer only asks (`request`), and a passive checkpoint runs beside it. A
/// passive checkpoint cannot finish the WAL while commits keep arriving, and SQLite starts the
/// WAL file over only once all of it was copied, so the writer finishes it itself when the WAL
/// reaches `Writer.walFrameLimit` (copying only what the last pass did not).
final class Checkpointer: @unchecked Sendable {
    // Sendable by confinement: `isRequested`, `isStopping` and `thread` are touched only while
    // holding `condition`; `connection` only by the checkpointer thread, then by `stop()` after
    // joining it.
    private let condition = Condition()
    private var isRequested = false
    private var isStopping = false
    private var thread: pthread_t?
    private let open: () throws -> Connection
    private var connection: Connection?
    /// Passes finished, so tests can wait for one.
    private let passes = Atomic<Int>(0)
    /// Runs on the checkpointer thread before each pass: tests hold passes back with it.
    let beforePass = Mutex<(@Sendable () -> Void)?>(nil)

    /// - Parameter open: opens the connection the passes run on, on the checkpointer thread at
    ///   the first request (a database that never grows its WAL never starts the thread).
    init(open: @escaping () throws -> Connection) {
        self.open = open
    }

    var passCount: Int { passes.load(ordering: .acquiring) }

    /// Asks for a pass; returns at once. Requests made while a pass runs start one more after it.
    /// False when the thread could not be started (the writer then checkpoints by itself).
    @discardableResult
    func request() -> Bool {
        condition.withLock {
            guard !isStopping else { return false }
            if thread == nil {
                guard let started = try? SystemThread.start(name: "siwa-db-checkpt", { [self] in run() }) else { return false }
                thread = started
            }
            isRequested = true
            condition.signal()
            return true
        }
    }

    /// Ends the thread after any pass in progress and closes its connection. Idempotent.
    func stop() {
        let thread = condition.withLock {
            isStopping = true
            condition.signal()
            let thread = self.thread
            self.thread = nil
            return thread
        }
        if let thread { pthread_join(thread, nil) }
    }

    private func run() {
        while true {
            condition.lock()
            while !isRequested && !isStopping { condition.wait() }
            let stopping = isStopping
            isRequested = false
            condition.unlock()
            if stopping { break }
            pass()
        }
        connection?.close()
        connection = nil
    }

    private func pass() {
        beforePass.withLock { $0 }?()
        if connection == nil { connection = try? open() }
        guard let connection else { return }
        connection.checkpointPassively()
        passes.add(1, ordering: .releasing)
    }
}
