#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with its condition variable, for threads that must sleep until there is
/// work (`Synchronization.Mutex` has no way to wait). One implementation for every module.
public final class Condition: @unchecked Sendable {
    // Sendable because the pthread objects are themselves the synchronization; the pointers
    // never change after init.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    // Timed waits are measured on the monotonic clock, immune to wall-clock steps (Darwin's
    // condition variables know only the wall clock).
    #if canImport(Darwin)
    private static let clock = CLOCK_REALTIME
    #else
    private static let clock = CLOCK_MONOTONIC
    #endif

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
        pthread_condattr_setclock(&attributes, Self.clock)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
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

    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Call with the lock held; returns with it held again. Wakes on a signal, a broadcast or
    /// spuriously, so callers wait in a loop over their own condition.
    public func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// `wait()`, giving up after `seconds`; false when it gave up.
    public func wait(seconds: Int) -> Bool {
        wait(milliseconds: seconds * 1000)
    }

    /// `wait()`, giving up after `milliseconds`; false when it gave up.
    public func wait(milliseconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(Self.clock, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + (milliseconds % 1000) * 1_000_000
        deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return pthread_cond_timedwait(condition, mutex, &deadline) != ETIMEDOUT
    }

    /// Wakes one waiter.
    public func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every waiter.
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
