import CSystem
import Glibc
import SystemThread

/// Starts named POSIX threads for the terminator, whose threads block in poll(2) and so must
/// not be tasks on Swift's cooperative pool.
public enum ThreadLauncher {
    /// Starts a joinable thread; the caller joins it.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(TLSError) -> pthread_t {
        do {
            return try SystemThread.start(name: name, body)
        } catch {
            throw .failed("\(error)")
        }
    }

    public static func startDetached(name: String, _ body: @escaping @Sendable () -> Void) throws(TLSError) {
        pthread_detach(try start(name: name, body))
    }
}

/// Counts running threads so a stop can wait for all of them to have finished.
public final class RunningThreads: @unchecked Sendable {
    // Sendable because `count` is only touched while holding `condition`.
    private let condition = Condition()
    private var count = 0

    public init() {}

    public func enter() {
        condition.withLock { count += 1 }
    }

    public func leave() {
        condition.withLock {
            count -= 1
            if count == 0 { condition.broadcast() }
        }
    }

    public func waitUntilNone() {
        condition.withLock {
            while count > 0 { condition.wait() }
        }
    }
}
