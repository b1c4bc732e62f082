import COpenSSL
import CSystem
import Glibc
import SystemThread

/// Threads of our own for blocking socket work. Callers suspend on a continuation while a
/// worker connects, handshakes and reads, so Swift's cooperative pool (which runs request
/// handlers) is never blocked. Threads start on demand up to `maxThreads` and end after a
/// minute idle; `shutdown()` ends them all and waits until they have.
final class WorkerPool: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Guarded by `mutex`.
    private var jobs: [Job] = []
    private var nextJob = 0
    private var threads: [pthread_t] = []
    private var idleThreads = 0
    private var shuttingDown = false

    private let maxThreads: Int
    private let idleExitSeconds: Int

    init(maxThreads: Int, idleExit: Duration = .seconds(60)) {
        self.maxThreads = max(1, maxThreads)
        idleExitSeconds = max(1, Int(idleExit.components.seconds))
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Idle waits are measured on the monotonic clock, immune to wall-clock steps.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Queues a job; it runs on a worker thread as soon as one is free.
    func submit(_ job: @escaping Job) {
        pthread_mutex_lock(mutex)
        jobs.append(job)
        let pending = jobs.count - nextJob
        if pending > idleThreads, threads.count < maxThreads, !shuttingDown, let thread = startThread() {
            threads.append(thread)
        }
        let stranded = threads.isEmpty
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
        // No thread could be made at all: run the queue here rather than leave a caller
        // suspended forever.
        if stranded { runPendingJobsInline() }
    }

    /// Ends every thread once its current job is done, and waits for them to have exited:
    /// a thread that used OpenSSL must not be tearing down its per-thread state while the
    /// process exits (OpenSSL's exit-time cleanup would race with it).
    func shutdown() {
        pthread_mutex_lock(mutex)
        shuttingDown = true
        let running = threads
        threads.removeAll()
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
        let current = pthread_self()
        for thread in running {
            if pthread_equal(thread, current) != 0 {
                pthread_detach(thread)
            } else {
                pthread_join(thread, nil)
            }
        }
    }

    /// Called with the mutex held.
    private func startThread() -> pthread_t? {
        try? SystemThread.start(name: "siwa-http-client") { [self] in
            work()
            // Frees OpenSSL's per-thread state now, not in a destructor after the thread is
            // gone (which could still be running when the process exits).
            OPENSSL_thread_stop()
        }
    }

    private func work() {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let job = takeJob() {
                pthread_mutex_unlock(mutex)
                job()
                pthread_mutex_lock(mutex)
                continue
            }
            if shuttingDown { return }
            idleThreads += 1
            var until = timespec()
            clock_gettime(CLOCK_MONOTONIC, &until)
            until.tv_sec += idleExitSeconds
            let waited = pthread_cond_timedwait(condition, mutex, &until)
            idleThreads -= 1
            if waited == ETIMEDOUT, nextJob == jobs.count, !shuttingDown {
                // Idle too long: leave, and let no one wait to join this thread.
                let current = pthread_self()
                threads.removeAll { pthread_equal($0, current) != 0 }
                pthread_detach(current)
                return
            }
        }
    }

    /// Called with the mutex held.
    private func takeJob() -> Job? {
        guard nextJob < jobs.count else { return nil }
        let job = jobs[nextJob]
        nextJob += 1
        if nextJob == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            nextJob = 0
        } else if nextJob >= 1024 {
            jobs.removeFirst(nextJob)
            nextJob = 0
        }
        return job
    }

    private func runPendingJobsInline() {
        while true {
            pthread_mutex_lock(mutex)
            let job = takeJob()
            pthread_mutex_unlock(mutex)
            guard let job else { return }
            job()
        }
    }
}
