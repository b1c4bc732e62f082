import Glibc
import Logging
import Sockets
import Synchronization

/// An HTTP/1.1 server on epoll: `threads` I/O loops sharing one listening socket, each running
/// request handlers as tasks on its own executor.
public final class HTTPServer: Sendable {
    private struct State {
        var loops: [HTTPLoop] = []
        var listenerFD: Int32 = -1
        var port: UInt16 = 0
        var started = false
        var stopRequested = false
        var exited = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var context: ServerContext?
    }

    private let configuration: HTTPServerConfiguration
    private let responder: any HTTPResponder
    private let logger: Logger
    private let state = Mutex(State())

    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder, logger: Logger = Logger(label: "siwa.http")) {
        self.configuration = configuration
        self.responder = responder
        self.logger = logger
    }

    /// A server whose errors are plain text: for tools and tests that bring no error shape.
    public convenience init(
        configuration: HTTPServerConfiguration, router: Router, observer: (any HTTPServerObserver)? = nil,
        logger: Logger = Logger(label: "siwa.http")
    ) {
        self.init(configuration: configuration, responder: RoutingResponder(router: router, observer: observer), logger: logger)
    }

    /// The bound port (useful with port 0); 0 before `start`.
    public var port: UInt16 { state.withLock { $0.port } }

    /// Bytes of the shared body budget no connection holds (tests wait on it); nil before `start`.
    var bodyBudgetLeft: Int? { state.withLock { $0.context }?.bodyBudget.bytesLeft }

    /// What every open connection holds for requests, each read on its own loop (tests compare
    /// it with the budget).
    func connectionMemory() async -> [ConnectionState.Memory] {
        var memory: [ConnectionState.Memory] = []
        for loop in state.withLock({ $0.loops }) {
            memory += await Task(executorPreference: loop.executor) { loop.connectionMemory() }.value
        }
        return memory
    }

    /// Connections accepted and not yet closed (tests wait on it); nil before `start`.
    var openConnectionCount: Int? { state.withLock { $0.context }?.openConnectionCount }

    /// Binds every loop's socket and starts the loops. Throws if the address cannot be bound;
    /// nothing is left open then.
    @discardableResult
    public func start() throws -> UInt16 {
        // A peer that resets mid-write must not kill the process; send() also says MSG_NOSIGNAL.
        signal(SIGPIPE, SIG_IGN)
        ListeningSocket.raiseDescriptorLimit()

        let (listenerFD, port) = try ListeningSocket.open(host: configuration.host, port: configuration.port)

        let background: BackgroundExecutor
        do {
            background = try BackgroundExecutor(threads: configuration.backgroundThreads, name: "siwa-bg")
        } catch {
            close(listenerFD)
            throw error
        }
        let context = ServerContext(
            responder: responder, configuration: configuration, background: background, logger: logger, loops: configuration.threads,
            onAllLoopsExited: { [weak self] in
                // No connection is left to hand a large body to it.
                background.stop()
                guard let self else { return }
                let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.exited = true
                    defer { state.waiters.removeAll() }
                    return state.waiters
                }
                waiters.forEach { $0.resume() }
            })
        var loops: [HTTPLoop] = []
        do {
            for index in 0..<configuration.threads {
                loops.append(try HTTPLoop(index: index, server: context, listenerFD: listenerFD))
            }
        } catch {
            close(listenerFD)
            background.stop()
            throw error
        }
        state.withLock {
            $0.loops = loops
            $0.listenerFD = listenerFD
            $0.context = context
            $0.port = port
            $0.started = true
        }
        for loop in loops { try loop.start(name: "siwa-io-\(loop.index)") }
        return port
    }

    /// Graceful stop: the listeners close at once, idle connections close, requests in flight
    /// finish (bounded by `timeouts.drain`), then the loops end. Returns when they have.
    public func stop() async {
        let (loops, listenerFD) = state.withLock { state -> ([HTTPLoop], Int32) in
            guard state.started, !state.stopRequested else { return ([], -1) }
            state.stopRequested = true
            return (state.loops, state.listenerFD)
        }
        let deadline = MonotonicClock.now() + configuration.timeouts.drain.nanoseconds
        for loop in loops {
            await Task(executorPreference: loop.executor) { loop.beginStop(deadline: deadline) }.value
        }
        // Every loop has unregistered it, so no loop can mistake a reused descriptor number for
        // the listener.
        if listenerFD >= 0 { close(listenerFD) }
        await waitUntilStopped()
    }

    /// Returns once every loop has ended (immediately if the server never started).
    public func waitUntilStopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if !state.started || state.exited { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
