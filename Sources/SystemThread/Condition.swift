#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with its condition variable. `Synchronization.Mutex` has no way to wait,
/// and a thread that serves a queue (the SQLite writer, a PostgreSQL pool worker) must sleep
/// until a job arrives rather than spin.
public final class Condition: @unchecked Sendable {
    // Sendable because the pthread objects are themselves the synchronization; the pointers
    // never change after init.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() {
        pthread_mutex_lock(mutex)
    }

    public func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Call with the lock held; returns with it held again.
    public func wait() {
        pthread_cond_wait(condition, mutex)
    }

    public func signal() {
        pthread_cond_signal(condition)
    }

    public func broadcast() {
        pthread_cond_broadcast(condition)
    }

    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
