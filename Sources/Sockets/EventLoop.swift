import CSystem
import Glibc
import SystemThread
import Synchronization

/// What an event loop serves: the descriptors it registered, a tick four times a second (for
/// deadlines), and its end. Called on the loop's thread only; Sendable because that thread
/// is handed it at the start.
package protocol EventLoopHandler: AnyObject, Sendable {
    /// `fd`, registered by the handler, is ready with `events` (epoll's bits).
    func ready(_ fd: Int32, events: UInt32)
    /// Four times a second, after the turn's tasks.
    func tick(now: UInt64)
    /// Whether the loop may end: asked after each turn; it ends once no task is queued either.
    var isFinished: Bool { get }
    /// `epoll_wait` failed for good: the loop ends after this.
    func failed(_ error: SocketError)
    /// The loop has ended, on its thread, after its last tasks.
    func loopExited()
}

/// One I/O thread: an epoll instance and a Swift task executor. Tasks that prefer it run here,
/// between the turns' I/O, so a handler that does not suspend runs on the thread that read its
/// request, with no hop; one that awaits slow work frees the loop and resumes here when done.
///
/// Everything but the job queue and the wake-up flag belongs to the loop thread alone; that
/// invariant is what makes the `@unchecked Sendable` sound.
package final class EventLoop: TaskExecutor, @unchecked Sendable {
    private let epollFD: Int32
    private let wakeFD: Int32
    /// The loop thread's id, published once it runs; enqueue compares against it.
    private let threadID = Atomic<UInt>(0)

    /// Jobs enqueued from other threads; the loop drains them after each wake-up.
    private let remoteJobs = Mutex<[UnownedJob]>([])
    /// Set while a wake-up write is outstanding, so a burst of remote jobs costs one write(2).
    private let wakePending = Atomic<Bool>(false)
    private let exited = Atomic<Bool>(false)
    /// Jobs enqueued by the loop thread itself: no lock needed.
    private var localJobs: [UnownedJob] = []

    /// How often the handler's `tick` runs: precise enough for timeouts counted in seconds, and
    /// nothing with thousands of idle connections.
    package static let tickInterval: UInt64 = 250_000_000

    package init() throws {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SocketError("epoll_create1") }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            close(epollFD)
            throw SocketError("eventfd")
        }
        register(wakeFD, events: EPOLLIN.rawValue)
    }

    deinit {
        close(epollFD)
        close(wakeFD)
    }

    // MARK: TaskExecutor

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if threadID.load(ordering: .relaxed) == UInt(pthread_self()) {
            localJobs.append(job)
        } else if exited.load(ordering: .acquiring) {
            // The loop is gone (a handler outlived a stop); finish the task here so it is not
            // stranded. Its connection is closed, so it only records the outcome.
            job.runSynchronously(on: asUnownedTaskExecutor())
        } else {
            remoteJobs.withLock { $0.append(job) }
            if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
                var one: UInt64 = 1
                _ = write(wakeFD, &one, 8)
            }
        }
    }

    // MARK: Descriptors

    package func register(_ fd: Int32, events: UInt32) {
        control(EPOLL_CTL_ADD, fd, events: events)
    }

    package func modify(_ fd: Int32, events: UInt32) {
        control(EPOLL_CTL_MOD, fd, events: events)
    }

    package func unregister(_ fd: Int32) {
        epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    private func control(_ operation: Int32, _ fd: Int32, events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = UInt64(UInt32(bitPattern: fd))
        epoll_ctl(epollFD, operation, fd, &event)
    }

    // MARK: Loop

    /// Starts the loop's thread, serving `handler` until it is finished.
    package func start(name: String, handler: some EventLoopHandler) throws {
        try SystemThread.startDetached(name: name) { [self] in run(handler) }
    }

    private func run(_ handler: some EventLoopHandler) {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        let maxEvents: Int32 = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(maxEvents))
        defer { events.deallocate() }
        var nextTick = MonotonicClock.now() + Self.tickInterval

        while true {
            let now = MonotonicClock.now()
            let timeout: Int32 = localJobs.isEmpty ? Int32(min(250, max(0, Int64(nextTick) - Int64(now)) / 1_000_000 + 1)) : 0
            let count = epoll_wait(epollFD, events, maxEvents, timeout)
            if count < 0, errno != EINTR {
                handler.failed(SocketError("epoll_wait"))
                break
            }
            for position in 0..<max(0, Int(count)) {
                let event = events[position]
                let fd = Int32(truncatingIfNeeded: event.data.u64)
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                } else {
                    handler.ready(fd, events: event.events)
                }
            }
            runJobs()
            let afterJobs = MonotonicClock.now()
            if afterJobs >= nextTick {
                handler.tick(now: afterJobs)
                nextTick = afterJobs + Self.tickInterval
            }
            if handler.isFinished, localJobs.isEmpty, remoteJobs.withLock({ $0.isEmpty }) { break }
        }
        exited.store(true, ordering: .releasing)
        // A job that raced with the exit flag is run now rather than stranded.
        runJobs()
        handler.loopExited()
    }

    /// Runs queued tasks until none are left, bounded so that a task that keeps re-enqueueing
    /// itself cannot starve the I/O.
    private func runJobs() {
        wakePending.store(false, ordering: .releasing)
        var rounds = 0
        while rounds < 64 {
            var batch = localJobs
            localJobs.removeAll(keepingCapacity: true)
            let remote = remoteJobs.withLock { jobs -> [UnownedJob] in
                let taken = jobs
                jobs.removeAll(keepingCapacity: true)
                return taken
            }
            batch.append(contentsOf: remote)
            if batch.isEmpty { return }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            rounds += 1
        }
    }
}
