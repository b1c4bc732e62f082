import CSystem
import Glibc
import SystemThread

/// Starts named POSIX threads for the terminator, whose threads block in poll(2) and so must
/// not be tasks on Swift's cooperative pool.
enum ThreadLauncher {
    /// Starts a joinable thread; the caller joins it.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(TLSError) -> pthread_t {
        do {
            return try SystemThread.start(name: name, body)
        } catch {
            throw .failed("\(error)")
        }
    }

    static func startDetached(name: String, _ body: @escaping @Sendable () -> Void) throws(TLSError) {
        pthread_detach(try start(name: name, body))
    }
}

/// Counts running threads so a stop can wait for all of them to have finished.
final class RunningThreads: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var count = 0

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func enter() {
        pthread_mutex_lock(mutex)
        count += 1
        pthread_mutex_unlock(mutex)
    }

    func leave() {
        pthread_mutex_lock(mutex)
        count -= 1
        if count == 0 { pthread_cond_broadcast(condition) }
        pthread_mutex_unlock(mutex)
    }

    func waitUntilNone() {
        pthread_mutex_lock(mutex)
        while count > 0 { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }
}
