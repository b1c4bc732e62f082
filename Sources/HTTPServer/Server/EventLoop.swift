import CSystem
import Glibc
import Logging
import SystemThread
import Synchronization

/// One I/O thread: an epoll instance, a listening socket, the connections it accepted, and a
/// Swift task executor. Request handlers run as tasks that prefer this executor, so a handler
/// that does not suspend runs right here, in order with the I/O, with no thread hop; one that
/// awaits slow work frees the loop and resumes here when the work is done.
///
/// Everything but the job queue and the wake-up flag belongs to the loop thread alone; that
/// invariant is what makes the `@unchecked Sendable` sound.
final class EventLoop: TaskExecutor, @unchecked Sendable {
    let index: Int
    let server: ServerContext
    private let epollFD: Int32
    private let wakeFD: Int32
    private var listenerFD: Int32
    /// The loop thread's id, published once it runs; enqueue compares against it.
    private let threadID = Atomic<UInt>(0)

    /// Jobs enqueued from other threads; the loop drains them after each wake-up.
    private let remoteJobs = Mutex<[UnownedJob]>([])
    /// Set while a wake-up write is outstanding, so a burst of remote jobs costs one write(2).
    private let wakePending = Atomic<Bool>(false)
    private let exited = Atomic<Bool>(false)
    /// Jobs enqueued by the loop thread itself: no lock needed.
    private var localJobs: [UnownedJob] = []

    private var connections: [Int32: Connection] = [:]
    private(set) var dateCache = DateHeaderCache()
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    private var stopping = false
    private var stopDeadline: UInt64 = 0
    private var acceptPausedUntil: UInt64 = 0
    private var nextSweep: UInt64 = 0

    init(index: Int, server: ServerContext, listenerFD: Int32) throws {
        self.index = index
        self.server = server
        self.listenerFD = listenerFD
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SocketError("epoll_create1") }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            close(epollFD)
            throw SocketError("eventfd")
        }
        register(wakeFD, events: EPOLLIN.rawValue)
        register(listenerFD, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
    }

    deinit {
        readBuffer.deallocate()
        close(epollFD)
        close(wakeFD)
    }

    // MARK: TaskExecutor

    func enqueue(_ job: consuming ExecutorJob) {
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

    // MARK: Loop

    func start(name: String) throws {
        try SystemThread.startDetached(name: name) { [self] in run() }
    }

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        let maxEvents: Int32 = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(maxEvents))
        defer { events.deallocate() }
        nextSweep = MonotonicClock.now() + 250_000_000

        while true {
            let now = MonotonicClock.now()
            let timeout: Int32 = localJobs.isEmpty ? Int32(min(250, max(0, Int64(nextSweep) - Int64(now)) / 1_000_000 + 1)) : 0
            let count = epoll_wait(epollFD, events, maxEvents, timeout)
            if count < 0, errno != EINTR {
                server.logger.critical("epoll_wait failed", metadata: ["error": "\(SocketError("epoll_wait"))"])
                break
            }
            for position in 0..<max(0, Int(count)) {
                let event = events[position]
                let fd = Int32(truncatingIfNeeded: event.data.u64)
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                } else if fd == listenerFD {
                    acceptConnections()
                } else if let connection = connections[fd] {
                    connection.handle(events: event.events)
                }
            }
            runJobs()
            let afterJobs = MonotonicClock.now()
            if afterJobs >= nextSweep {
                sweep(now: afterJobs)
                nextSweep = afterJobs + 250_000_000
            }
            if stopping, connections.isEmpty, localJobs.isEmpty, remoteJobs.withLock({ $0.isEmpty }) { break }
        }
        exited.store(true, ordering: .releasing)
        // A job that raced with the exit flag is run now rather than stranded.
        runJobs()
        server.loopExited()
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

    // MARK: Connections

    private func acceptConnections() {
        guard !stopping else { return }
        // A few per wake-up: the listener stays readable, so the other loops, woken one at a time
        // by EPOLLEXCLUSIVE, take the rest and connections spread across loops.
        for _ in 0..<4 {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept4(listenerFD, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
            if fd < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED:
                    return
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: stop accepting for a moment instead of spinning.
                    server.logger.error("accept paused: out of descriptors", metadata: ["loop": "\(index)"])
                    unregister(listenerFD)
                    acceptPausedUntil = MonotonicClock.now() + 100_000_000
                    return
                default:
                    server.logger.error("accept failed", metadata: ["error": "\(SocketError("accept4"))"])
                    return
                }
            }
            let peer = ListeningSocket.formatAddress(address)
            let client = server.capKey(for: peer)
            guard server.admitConnection(countedAs: client) else {
                // Over a cap: closed at once, before a byte is read or a buffer is made.
                close(fd)
                continue
            }
            var noDelay: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            let connection = Connection(fd: fd, remoteAddress: peer, countedAs: client, loop: self, now: MonotonicClock.now())
            connections[fd] = connection
            register(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
        }
    }

    func connectionClosed(_ connection: Connection) {
        connections.removeValue(forKey: connection.fd)
        server.connectionEnded(countedAs: connection.countedAs)
    }

    func register(_ fd: Int32, events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = UInt64(UInt32(bitPattern: fd))
        epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
    }

    func modify(_ fd: Int32, events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = UInt64(UInt32(bitPattern: fd))
        epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
    }

    private func unregister(_ fd: Int32) {
        epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    var isStopping: Bool { stopping }

    func connectionMemory() -> [ConnectionState.Memory] { connections.values.map(\.memory) }

    func currentDate() -> String { dateCache.current() }

    /// Enforces every connection's deadline; four times a second is precise enough for
    /// timeouts counted in seconds and costs nothing with thousands of idle connections.
    private func sweep(now: UInt64) {
        if acceptPausedUntil != 0, now >= acceptPausedUntil, !stopping {
            acceptPausedUntil = 0
            register(listenerFD, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
        }
        if stopping, now >= stopDeadline {
            for connection in Array(connections.values) { connection.forceClose() }
            return
        }
        for connection in Array(connections.values) { connection.checkDeadline(now: now) }
    }

    // MARK: Stop

    /// Stops accepting at once; idle connections close now, busy ones after their response.
    /// The listener is shared, so the server closes it once every loop has let go of it.
    func beginStop(deadline: UInt64) {
        guard !stopping else { return }
        stopping = true
        stopDeadline = deadline
        if listenerFD >= 0 {
            unregister(listenerFD)
            listenerFD = -1
        }
        for connection in Array(connections.values) { connection.serverStopping() }
    }
}

/// What every loop of one server shares: read-only after start, except `loopExited`.
final class ServerContext: Sendable {
    let responder: any HTTPResponder
    let configuration: HTTPServerConfiguration
    /// Where requests with large bodies run, so the loops stay free for the rest.
    let background: BackgroundExecutor
    let logger: Logger
    private let onAllLoopsExited: @Sendable () -> Void
    private let runningLoops: Atomic<Int>
    private let openConnections = Mutex(OpenConnections())
    /// `limits.bufferedBodyBudget`, drawn on by every connection.
    let bodyBudget: BodyBudget

    init(
        responder: any HTTPResponder, configuration: HTTPServerConfiguration, background: BackgroundExecutor, logger: Logger,
        loops: Int, onAllLoopsExited: @escaping @Sendable () -> Void
    ) {
        self.responder = responder
        self.configuration = configuration
        self.background = background
        self.logger = logger
        self.runningLoops = Atomic(loops)
        self.onAllLoopsExited = onAllLoopsExited
        self.bodyBudget = BodyBudget(bytes: configuration.limits.bufferedBodyBudget)
    }

    /// Whom a peer's connections count against for the per-client cap; nil for a peer exempt
    /// from it.
    func capKey(for address: String) -> ClientKey? {
        configuration.isExemptFromAddressCap(address) ? nil : ClientKey(address: address)
    }

    /// Counts a new connection, or refuses it when it would pass `maxConnections` or the
    /// per-client cap. Once per connection, so one lock shared by the loops costs nothing.
    func admitConnection(countedAs client: ClientKey?) -> Bool {
        openConnections.withLock { $0.admit(client, limits: configuration.limits) }
    }

    func connectionEnded(countedAs client: ClientKey?) {
        openConnections.withLock { $0.end(client) }
    }

    var openConnectionCount: Int { openConnections.withLock { $0.total } }

    func loopExited() {
        if runningLoops.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { onAllLoopsExited() }
    }
}
