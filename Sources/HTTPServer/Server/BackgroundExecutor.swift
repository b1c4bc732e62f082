import Glibc
import SystemThread
import Synchronization

/// Threads of lowered priority for request work that takes milliseconds of CPU (bodies of
/// `offloadBodyBytes` or more). On a machine whose cores are all busy, the I/O loops still win
/// the CPU whenever a small request arrives, so `/healthz` keeps its latency while big bodies
/// are parsed; and fewer threads than cores leaves a core for the loops.
final class BackgroundExecutor: TaskExecutor, @unchecked Sendable {
    /// Added to the threads' nice value (Linux keeps it per thread): the scheduler gives them a
    /// smaller share and lets a waking loop thread preempt them.
    static let niceIncrement: Int32 = 10

    private let queue = Mutex<(jobs: FIFO<UnownedJob>, stopped: Bool)>((FIFO(), false))
    private let available = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    private let threadCount: Int
    private var threads: [pthread_t] = []

    init(threads count: Int, name: String) throws {
        threadCount = max(1, count)
        sem_init(available, 0, 0)
        for index in 0..<threadCount {
            threads.append(try SystemThread.start(name: "\(name)-\(index)") { [self] in work() })
        }
    }

    /// At most `cores - 1` threads, and at least one.
    static func defaultThreads() -> Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) - 1)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = queue.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted {
            sem_post(available)
        } else {
            // Stopped: a task that outlived the server finishes on the caller's thread.
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func work() {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceIncrement)
        while true {
            while sem_wait(available) != 0, errno == EINTR {}
            let next = queue.withLock { $0.jobs.popFirst() }
            guard let next else { return }  // woken with nothing queued: stop was called
            next.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Finishes what is queued, then ends the threads.
    func stop() {
        queue.withLock { $0.stopped = true }
        for _ in 0..<threadCount { sem_post(available) }
        for thread in threads { pthread_join(thread, nil) }
        threads.removeAll()
    }

    deinit {
        sem_destroy(available)
        available.deallocate()
    }
}
