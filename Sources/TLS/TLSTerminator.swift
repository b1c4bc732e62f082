import COpenSSL
import CSystem
import Glibc
import Synchronization

/// A small TLS front for a plain HTTP server on loopback: it accepts TLS connections and pipes
/// the decrypted bytes both ways to `127.0.0.1:<backendPort>` until either side closes. One
/// thread per connection: this serves the Apple ID simulator and tests, not production load.
public final class TLSTerminator: Sendable {
    private struct State {
        var listenerFD: Int32 = -1
        var wakeFD: Int32 = -1
        var acceptThread: pthread_t?
        var port: UInt16 = 0
        var started = false
        var stopped = false
        var accepted = 0
        /// Sockets owned by connection threads; a stop shuts them down to wake their polls.
        /// A thread removes its socket here before closing it, so a stop never touches a
        /// descriptor number that has been reused.
        var connectionFDs: Set<Int32> = []
        /// Sockets adopted and not yet closed (counted down after `close`, unlike the set).
        var openSockets = 0
    }

    private let context: TLSServerContext
    private let backendPort: UInt16
    private let host: String
    private let requestedPort: UInt16
    private let handshakeTimeout: Duration
    private let writeTimeout: Duration
    private let state = Mutex(State())
    private let connectionThreads = RunningThreads()

    /// - Parameters:
    ///   - host: the address to listen on, an IP literal or `localhost`.
    ///   - port: 0 picks a free port; `start()` returns it.
    ///   - handshakeTimeout: a client that has not finished its handshake by then is dropped.
    ///   - writeTimeout: a side that takes no bytes for this long is dropped.
    public init(
        context: TLSServerContext, backendPort: UInt16, host: String = "127.0.0.1", port: UInt16 = 0,
        handshakeTimeout: Duration = .seconds(10), writeTimeout: Duration = .seconds(30)
    ) {
        self.context = context
        self.backendPort = backendPort
        self.host = host
        self.requestedPort = port
        self.handshakeTimeout = handshakeTimeout
        self.writeTimeout = writeTimeout
    }

    /// The bound port; 0 before `start()`.
    public var port: UInt16 { state.withLock { $0.port } }

    /// TCP connections accepted so far (tests count them to see connection reuse).
    public var acceptedConnections: Int { state.withLock { $0.accepted } }

    /// Sockets of connections not yet ended, both sides counted (tests wait for it to fall to 0
    /// to know a close has been passed on).
    public var openSockets: Int { state.withLock { $0.openSockets } }

    /// Binds, listens and starts accepting; returns the bound port.
    @discardableResult
    public func start() throws(TLSError) -> UInt16 {
        OpenSSLProcessSetup.ignoreSIGPIPE()
        let (listenerFD, port) = try TCPListener.open(host: host, port: requestedPort)
        let wakeFD = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            close(listenerFD)
            throw .failed("eventfd: \(TLSError.systemReason(errno))")
        }
        let alreadyStarted = state.withLock { state -> Bool in
            if state.started { return true }
            state.started = true
            state.listenerFD = listenerFD
            state.wakeFD = wakeFD
            state.port = port
            return false
        }
        if alreadyStarted {
            close(listenerFD)
            close(wakeFD)
            throw .setup("the terminator was already started")
        }
        let thread = try ThreadLauncher.start(name: "tls-accept") { self.acceptLoop(listenerFD: listenerFD, wakeFD: wakeFD) }
        state.withLock { $0.acceptThread = thread }
        return port
    }

    /// Stops accepting, closes every connection, and returns once all threads have ended.
    public func stop() {
        let (thread, listenerFD, wakeFD) = state.withLock { state -> (pthread_t?, Int32, Int32) in
            guard state.started, !state.stopped else { return (nil, -1, -1) }
            state.stopped = true
            for fd in state.connectionFDs { shutdown(fd, Int32(SHUT_RDWR)) }
            return (state.acceptThread, state.listenerFD, state.wakeFD)
        }
        guard wakeFD >= 0 else { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        if let thread { pthread_join(thread, nil) }
        close(listenerFD)
        connectionThreads.waitUntilNone()
        close(wakeFD)
    }

    // MARK: Accepting

    private func acceptLoop(listenerFD: Int32, wakeFD: Int32) {
        while true {
            var descriptors = [pollfd(fd: listenerFD, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            if poll(&descriptors, 2, -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { return }
            let client = accept4(listenerFD, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
            if client < 0 {
                // Out of descriptors: back off rather than spin on a listener that stays ready.
                if errno == EMFILE || errno == ENFILE { usleep(10_000) }
                continue
            }
            guard adopt(client) else {
                close(client)
                return
            }
            connectionThreads.enter()
            do {
                try ThreadLauncher.startDetached(name: "tls-conn") {
                    self.serve(client: client)
                    // OpenSSL's per-thread state goes now, before `stop()` can return, not in
                    // a destructor that might still run while the process exits.
                    OPENSSL_thread_stop()
                    self.connectionThreads.leave()
                }
            } catch {
                release(client)
                connectionThreads.leave()
            }
        }
    }

    /// Records a socket a connection thread owns; false once stopping.
    private func adopt(_ fd: Int32, countAsAccepted: Bool = true) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            state.connectionFDs.insert(fd)
            state.openSockets += 1
            if countAsAccepted { state.accepted += 1 }
            return true
        }
    }

    private func release(_ fd: Int32) {
        state.withLock { _ = $0.connectionFDs.remove(fd) }
        close(fd)
        state.withLock { $0.openSockets -= 1 }
    }

    // MARK: One connection

    private func serve(client: Int32) {
        defer { release(client) }
        guard let tls = try? context.makeConnection(fd: client) else { return }
        guard (try? tls.handshake(until: .after(handshakeTimeout))) != nil else { return }
        guard let backend = connectBackend() else {
            tls.shutdown()
            return
        }
        defer { release(backend) }
        pipe(tls: tls, client: client, backend: backend)
        tls.shutdown()
    }

    private func connectBackend() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        guard adopt(fd, countAsAccepted: false) else {
            close(fd)
            return nil
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = backendPort.bigEndian
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        // A blocking connect is fine: loopback answers at once.
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            release(fd)
            return nil
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    /// Moves bytes until the backend closes, either side fails, or a stop shuts the sockets.
    /// A client that closes its side (close_notify or FIN) half-closes the backend, so a
    /// response still on its way gets through.
    private func pipe(tls: TLSConnection, client: Int32, backend: Int32) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { buffer.deallocate() }
        var clientOpen = true
        while true {
            var clientReady = false
            var backendReady = false
            if clientOpen, tls.bufferedByteCount > 0 {
                clientReady = true
            } else {
                var descriptors = [
                    pollfd(fd: clientOpen ? client : -1, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: backend, events: Int16(POLLIN), revents: 0),
                ]
                if poll(&descriptors, 2, -1) < 0 {
                    if errno == EINTR { continue }
                    return
                }
                clientReady = descriptors[0].revents != 0
                backendReady = descriptors[1].revents != 0
            }
            if clientReady {
                readFromClient: while true {
                    guard let availability = try? tls.readAvailable(into: buffer) else { return }
                    switch availability {
                    case .data(let count):
                        guard sendAll(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), to: backend) else { return }
                    case .wouldBlock:
                        break readFromClient
                    case .endOfInput:
                        clientOpen = false
                        shutdown(backend, Int32(SHUT_WR))
                        break readFromClient
                    }
                }
            }
            if backendReady {
                let count = recv(backend, buffer.baseAddress, buffer.count, 0)
                if count == 0 { return }
                if count < 0 {
                    if errno == EAGAIN || errno == EINTR { continue }
                    return
                }
                guard (try? tls.write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), until: .after(writeTimeout))) != nil else { return }
            }
        }
    }

    private func sendAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        let deadline = Deadline.after(writeTimeout)
        var offset = 0
        while offset < bytes.count {
            let sent = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if sent > 0 {
                offset += sent
            } else if sent < 0, errno == EAGAIN || errno == EINTR {
                guard deadline.wait(for: fd, events: Int16(POLLOUT)) else { return false }
            } else {
                return false
            }
        }
        return true
    }
}
