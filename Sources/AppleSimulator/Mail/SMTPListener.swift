import CSystem
import Glibc
import Synchronization
import TLS

/// The simulator's SMTP server on 127.0.0.1: one thread accepts, one thread serves each
/// connection (as the TLS front does; this is a test tool), at most `maxConnections` at once.
/// Every read and write has a deadline and the whole session one more, so a client that stalls
/// or trickles ends up dropped and never holds up another.
final class SMTPListener: Sendable {
    private struct State {
        var listenerFD: Int32 = -1
        var wakeFD: Int32 = -1
        var acceptThread: pthread_t?
        var port: UInt16 = 0
        var started = false
        var stopped = false
        /// Sockets owned by connection threads; a stop shuts them down to wake their polls.
        var connectionFDs: Set<Int32> = []
    }

    /// Command lines: RFC 5321's 512 octets is too tight for some clients' parameters.
    static let maxCommandLine = 2048
    /// Text lines of a message: 998 octets and CRLF (RFC 5321 §4.5.3.1.6).
    static let maxTextLine = 998

    private let settings: SimulatorMailSettings
    private let route: SMTPServerSession.Router
    private let deliver: SMTPServerSession.Deliverer
    private let state = Mutex(State())
    private let connectionThreads = RunningThreads()

    init(
        settings: SimulatorMailSettings, route: @escaping SMTPServerSession.Router, deliver: @escaping SMTPServerSession.Deliverer
    ) {
        self.settings = settings
        self.route = route
        self.deliver = deliver
    }

    /// Binds 127.0.0.1 and starts accepting; returns the bound port.
    func start() throws -> UInt16 {
        let (listenerFD, port) = try TCPListener.open(host: "127.0.0.1", port: settings.port)
        let wakeFD = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            close(listenerFD)
            throw TLSError.failed("eventfd: \(String(cString: strerror(errno)))")
        }
        state.withLock { state in
            state.started = true
            state.listenerFD = listenerFD
            state.wakeFD = wakeFD
            state.port = port
        }
        do {
            let thread = try ThreadLauncher.start(name: "smtp-accept") { self.acceptLoop(listenerFD: listenerFD, wakeFD: wakeFD) }
            state.withLock { $0.acceptThread = thread }
        } catch {
            state.withLock { $0.stopped = true }
            close(listenerFD)
            close(wakeFD)
            throw error
        }
        return port
    }

    /// Stops accepting, drops every connection, and returns once all threads have ended.
    func stop() {
        let (thread, listenerFD, wakeFD) = state.withLock { state -> (pthread_t?, Int32, Int32) in
            guard state.started, !state.stopped else { return (nil, -1, -1) }
            state.stopped = true
            for fd in state.connectionFDs { shutdown(fd, Int32(SHUT_RDWR)) }
            return (state.acceptThread, state.listenerFD, state.wakeFD)
        }
        guard wakeFD >= 0 else { return }
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
        if let thread { pthread_join(thread, nil) }
        close(listenerFD)
        connectionThreads.waitUntilNone()
        close(wakeFD)
    }

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
            switch adopt(client) {
            case .stopping:
                close(client)
                return
            case .full:
                // Told at once, without waiting: a full server must not be wedged by this one.
                _ = SMTPSocket(fd: client).write("421 4.7.0 too many connections, try again later", until: .now)
                close(client)
                continue
            case .adopted:
                break
            }
            connectionThreads.enter()
            do {
                try ThreadLauncher.startDetached(name: "smtp-conn") {
                    self.serve(client)
                    self.release(client)
                    self.connectionThreads.leave()
                }
            } catch {
                release(client)
                connectionThreads.leave()
            }
        }
    }

    private enum Adoption { case adopted, full, stopping }

    private func adopt(_ fd: Int32) -> Adoption {
        state.withLock { state in
            if state.stopped { return .stopping }
            guard state.connectionFDs.count < settings.maxConnections else { return .full }
            state.connectionFDs.insert(fd)
            return .adopted
        }
    }

    private func release(_ fd: Int32) {
        state.withLock { _ = $0.connectionFDs.remove(fd) }
        close(fd)
    }

    // MARK: One connection

    private func serve(_ fd: Int32) {
        var socket = SMTPSocket(fd: fd)
        let sessionDeadline = Deadline.after(settings.sessionTimeout)
        var session = SMTPServerSession(maxMessageBytes: settings.maxMessageBytes, route: route, deliver: deliver)
        func deadline() -> Deadline { min(.after(settings.commandTimeout), sessionDeadline) }
        guard socket.write(SMTPServerSession.greeting, until: deadline()) else { return }
        while true {
            let step: SMTPServerSession.Step
            switch socket.readLine(limit: Self.maxCommandLine, until: deadline()) {
            case .closed: return
            case .timedOut:
                _ = socket.write("421 4.4.2 \(SMTPServerSession.hostName) timeout, closing", until: .after(.seconds(1)))
                return
            case .tooLong: step = .reply("500 5.5.2 line too long")
            case .line(let line): step = session.command(line)
            }
            switch step {
            case .reply(let reply):
                guard socket.write(reply, until: deadline()) else { return }
            case .close(let reply):
                _ = socket.write(reply, until: deadline())
                return
            case .startData(let reply):
                guard socket.write(reply, until: deadline()) else { return }
                guard let (data, refusal) = readMessage(&socket, deadline: deadline) else {
                    _ = socket.write("421 4.4.2 \(SMTPServerSession.hostName) timeout or disconnect in DATA, closing", until: .after(.seconds(1)))
                    return
                }
                let answer = session.finishData(data, refusal: refusal)
                guard socket.write(answer, until: deadline()) else { return }
            }
        }
    }

    /// The message up to its lone `.`, dot-unstuffed, lines ended by CRLF; nil data with the
    /// refusal when it is too large or has a line too long (read to its end all the same, so
    /// the conversation can go on). Nil when the client goes away or stalls.
    private func readMessage(_ socket: inout SMTPSocket, deadline: () -> Deadline) -> ([UInt8]?, String)? {
        var data: [UInt8] = []
        var refusal: String?
        while true {
            switch socket.readLine(limit: Self.maxTextLine, until: deadline()) {
            case .closed, .timedOut:
                return nil
            case .tooLong:
                refusal = refusal ?? "500 5.5.2 a line of the message is longer than \(Self.maxTextLine) octets"
                data = []
            case .line(let line):
                if line == [UInt8(ascii: ".")] {
                    return refusal.map { (nil, $0) } ?? (data, "")
                }
                guard refusal == nil else { continue }
                let text = line.first == UInt8(ascii: ".") ? line.dropFirst() : line[...]
                if data.count + text.count + 2 > settings.maxMessageBytes {
                    refusal = "552 5.3.4 message larger than \(settings.maxMessageBytes) octets"
                    data = []
                } else {
                    data += text
                    data += [0x0D, 0x0A]
                }
            }
        }
    }
}
