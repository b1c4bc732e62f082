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

    private let condition = Condition()
    // Guarded by `condition`.
    private var jobs = FIFO<Job>()
    private var threads: [pthread_t] = []
    private var idleThreads = 0
    private var shuttingDown = false

    private let maxThreads: Int
    private let idleExitSeconds: Int

    init(maxThreads: Int, idleExit: Duration = .seconds(60)) {
        self.maxThreads = max(1, maxThreads)
        idleExitSeconds = max(1, Int(idleExit.components.seconds))
    }

    /// Queues a job; it runs on a worker thread as soon as one is free.
    func submit(_ job: @escaping Job) {
        condition.lock()
        jobs.append(job)
        let pending = jobs.count
        if pending > idleThreads, threads.count < maxThreads, !shuttingDown, let thread = startThread() {
            threads.append(thread)
        }
        let stranded = threads.isEmpty
        condition.signal()
        condition.unlock()
        // No thread could be made at all: run the queue here rather than leave a caller
        // suspended forever.
        if stranded { runPendingJobsInline() }
    }

    /// Ends every thread once its current job is done, and waits for them to have exited:
    /// a thread that used OpenSSL must not be tearing down its per-thread state while the
    /// process exits (OpenSSL's exit-time cleanup would race with it).
    func shutdown() {
        let running = condition.withLock {
            shuttingDown = true
            let running = threads
            threads.removeAll()
            condition.broadcast()
            return running
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

    /// Called with the lock held.
    private func startThread() -> pthread_t? {
        try? SystemThread.start(name: "siwa-http-client") { [self] in
            work()
            // Frees OpenSSL's per-thread state now, not in a destructor after the thread is
            // gone (which could still be running when the process exits).
            OPENSSL_thread_stop()
        }
    }

    private func work() {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let job = takeJob() {
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            if shuttingDown { return }
            idleThreads += 1
            let woken = condition.wait(seconds: idleExitSeconds)
            idleThreads -= 1
            if !woken, jobs.isEmpty, !shuttingDown {
                // Idle too long: leave, and let no one wait to join this thread.
                let current = pthread_self()
                threads.removeAll { pthread_equal($0, current) != 0 }
                pthread_detach(current)
                return
            }
        }
    }

    /// Called with the lock held.
    private func takeJob() -> Job? {
        jobs.popFirst()
    }

    private func runPendingJobsInline() {
        while true {
            let job = condition.withLock { takeJob() }
            guard let job else { return }
            job()
        }
    }
}
