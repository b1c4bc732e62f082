import CSystem
import Glibc
import Logging
import Sockets

/// The HTTP side of one I/O thread: the connections its `EventLoop` accepted on the shared
/// listening socket, their deadlines, and the graceful stop. Everything here is touched on the
/// loop's thread only (a task that reads it runs on `executor`, as request handlers do): the
/// invariant that makes the `@unchecked Sendable` sound.
final class HTTPLoop: EventLoopHandler, @unchecked Sendable {
    let index: Int
    let server: ServerContext
    /// The loop's thread, as the executor request handlers prefer.
    let executor: EventLoop
    private var listenerFD: Int32

    private var connections: [Int32: Connection] = [:]
    private(set) var dateCache = DateHeaderCache()
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    private var stopping = false
    private var stopDeadline: UInt64 = 0
    private var acceptPausedUntil: UInt64 = 0

    init(index: Int, server: ServerContext, listenerFD: Int32) throws {
        self.index = index
        self.server = server
        self.listenerFD = listenerFD
        executor = try EventLoop()
        executor.register(listenerFD, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
    }

    deinit {
        readBuffer.deallocate()
    }

    func start(name: String) throws {
        try executor.start(name: name, handler: self)
    }

    // MARK: EventLoopHandler

    func ready(_ fd: Int32, events: UInt32) {
        if fd == listenerFD {
            acceptConnections()
        } else if let connection = connections[fd] {
            connection.handle(events: events)
        }
    }

    var isFinished: Bool { stopping && connections.isEmpty }

    func failed(_ error: SocketError) {
        server.logger.critical("epoll_wait failed", metadata: ["error": "\(error)"])
    }

    func loopExited() {
        server.loopExited()
    }

    /// Enforces every connection's deadline.
    func tick(now: UInt64) {
        if acceptPausedUntil != 0, now >= acceptPausedUntil, !stopping {
            acceptPausedUntil = 0
            executor.register(listenerFD, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
        }
        if stopping, now >= stopDeadline {
            for connection in Array(connections.values) { connection.forceClose() }
            return
        }
        for connection in Array(connections.values) { connection.checkDeadline(now: now) }
    }

    // MARK: Connections

    private func acceptConnections() {
        guard !stopping else { return }
        // A few per wake-up: the listener stays readable, so the other loops, woken one at a time
        // by EPOLLEXCLUSIVE, take the rest and connections spread across loops.
        for _ in 0..<4 {
            switch ListeningSocket.accept(listenerFD) {
            case .none:
                return
            case .outOfResources:
                // Out of descriptors: stop accepting for a moment instead of spinning.
                server.logger.error("accept paused: out of descriptors", metadata: ["loop": "\(index)"])
                executor.unregister(listenerFD)
                acceptPausedUntil = MonotonicClock.now() + 100_000_000
                return
            case .failed(let error):
                server.logger.error("accept failed", metadata: ["error": "\(error)"])
                return
            case .connection(let fd, let peer):
                let socket = ConnectedSocket(fd: fd)
                let client = server.capKey(for: peer)
                guard server.admitConnection(countedAs: client) else {
                    // Over a cap: closed at once, before a byte is read or a buffer is made.
                    socket.close()
                    continue
                }
                socket.setNoDelay()
                connections[fd] = Connection(socket: socket, remoteAddress: peer, countedAs: client, loop: self, now: MonotonicClock.now())
                executor.register(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
            }
        }
    }

    func connectionClosed(_ connection: Connection) {
        connections.removeValue(forKey: connection.socket.fd)
        server.connectionEnded(countedAs: connection.countedAs)
    }

    func modify(_ fd: Int32, events: UInt32) {
        executor.modify(fd, events: events)
    }

    var isStopping: Bool { stopping }

    func connectionMemory() -> [ConnectionState.Memory] { connections.values.map(\.memory) }

    func currentDate() -> String { dateCache.current() }

    // MARK: Stop

    /// Stops accepting at once; idle connections close now, busy ones after their response.
    /// The listener is shared, so the server closes it once every loop has let go of it.
    func beginStop(deadline: UInt64) {
        guard !stopping else { return }
        stopping = true
        stopDeadline = deadline
        if listenerFD >= 0 {
            executor.unregister(listenerFD)
            listenerFD = -1
        }
        for connection in Array(connections.values) { connection.serverStopping() }
    }
}
