import Foundation
import Glibc
import TLS

/// An SMTP server on loopback whose every answer can be scripted: a well-behaved server by
/// default (STARTTLS with a throwaway certificate, AUTH PLAIN and LOGIN, one message after
/// another), and any command answered otherwise, or not at all, or by closing. It records the
/// commands and messages it received, so tests can see what went over the wire.
final class FakeSMTPServer: @unchecked Sendable {
    enum Event: Equatable {
        case connected
        case command(String)
        /// What came after `DATA`'s 354, up to the final `.` line (excluded), as it came:
        /// dot-stuffed.
        case message([UInt8])
    }

    enum Action {
        /// One reply: its lines as written (`250-a\r\n250 b`); the last CRLF is added.
        case reply(String)
        case replyAndClose(String)
        case close
        /// Never answers; waits until the client closes or the server stops.
        case stall
        /// Sends the reply, then runs the server side of a TLS handshake.
        case startTLS(String)
        /// Bytes as they are, no CRLF added.
        case raw([UInt8])
    }

    struct Context {
        /// From 0, in the order accepted.
        let connection: Int
        /// The commands received before this one on the same connection.
        let previous: [String]
        let isEncrypted: Bool
    }

    /// Nil: the default answer.
    typealias Script = @Sendable (_ event: Event, _ context: Context) -> Action?

    let port: UInt16
    private let listenerFD: Int32
    private let tls: TLSServerContext?
    private let implicitTLS: Bool
    private let extensions: [String]
    private let script: Script
    private let lock = NSLock()
    private var accepted = 0
    private var received: [(connection: Int, line: String)] = []
    private var receivedMessages: [[UInt8]] = []
    private var openFDs: Set<Int32> = []
    private var stopped = false
    private let finished = DispatchGroup()

    /// - Parameters:
    ///   - tls: the certificate to present (STARTTLS, or from the first byte with `implicitTLS`).
    ///   - extensions: what EHLO offers; STARTTLS is left out once encrypted.
    init(tls: TLSServerContext?, implicitTLS: Bool = false, extensions: [String] = ["PIPELINING", "STARTTLS", "AUTH PLAIN LOGIN"], script: @escaping Script = { _, _ in nil }) throws {
        self.tls = tls
        self.implicitTLS = implicitTLS
        self.extensions = extensions
        self.script = script
        (listenerFD, port) = try Self.listen()
        finished.enter()
        Thread.detachNewThread { [self] in
            acceptLoop()
            finished.leave()
        }
    }

    var acceptedConnections: Int { lock.withLock { accepted } }
    /// Every command received, with its connection.
    var commands: [(connection: Int, line: String)] { lock.withLock { received } }
    /// The command verbs received (`EHLO`, `MAIL`, `RCPT`…), in order.
    var verbs: [String] { commands.map { String($0.line.prefix { $0 != " " && $0 != ":" }).uppercased() } }
    var messages: [[UInt8]] { lock.withLock { receivedMessages } }

    func stop() {
        // Once only: a second stop would shut down and close the listener's number again,
        // which may belong to another test's file by then.
        let first = lock.withLock {
            if stopped { return false }
            stopped = true
            for fd in openFDs { shutdown(fd, Int32(SHUT_RDWR)) }
            return true
        }
        guard first else { return }
        shutdown(listenerFD, Int32(SHUT_RDWR))
        finished.wait()
        close(listenerFD)
    }

    // MARK: Serving

    private func acceptLoop() {
        while true {
            let fd = accept(listenerFD, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let number: Int? = lock.withLock {
                if stopped { return nil }
                openFDs.insert(fd)
                accepted += 1
                return accepted - 1
            }
            guard let number else {
                close(fd)
                return
            }
            finished.enter()
            Thread.detachNewThread { [self] in
                serve(Channel(fd: fd), connection: number)
                lock.withLock { _ = openFDs.remove(fd) }
                close(fd)
                finished.leave()
            }
        }
    }

    private func serve(_ channel: Channel, connection: Int) {
        if implicitTLS {
            guard let tls, channel.startTLS(tls) else { return }
        }
        var previous: [String] = []
        var event = Event.connected
        while true {
            let context = Context(connection: connection, previous: previous, isEncrypted: channel.isEncrypted)
            let action = script(event, context) ?? defaultAction(event, context)
            switch action {
            case .reply(let text):
                guard channel.write(Array("\(text)\r\n".utf8)) else { return }
            case .replyAndClose(let text):
                _ = channel.write(Array("\(text)\r\n".utf8))
                return
            case .close:
                return
            case .stall:
                channel.drainUntilClosed()
                return
            case .startTLS(let text):
                guard channel.write(Array("\(text)\r\n".utf8)), let tls, channel.startTLS(tls) else { return }
            case .raw(let bytes):
                guard channel.write(bytes) else { return }
            }
            // After a 354 to DATA, the message comes next.
            if case .command(let line) = event, line.uppercased() == "DATA", case .reply(let text) = action, text.hasPrefix("354") {
                guard let message = channel.readUntil(Array("\r\n.\r\n".utf8), orStartingWith: Array(".\r\n".utf8)) else { return }
                lock.withLock { receivedMessages.append(message) }
                event = .message(message)
                continue
            }
            guard let line = channel.readLine() else { return }
            lock.withLock { received.append((connection, line)) }
            if case .command(let last) = event { previous.append(last) }
            event = .command(line)
        }
    }

    private func defaultAction(_ event: Event, _ context: Context) -> Action {
        switch event {
        case .connected:
            return .reply("220 fake.example ESMTP ready")
        case .message:
            return .reply("250 2.0.0 Ok: queued as FAKE\(context.connection)")
        case .command(let line):
            let upper = line.uppercased()
            if upper.hasPrefix("EHLO ") {
                let offered = extensions.filter { !(context.isEncrypted && $0 == "STARTTLS") }
                return .reply((["fake.example greets you"] + offered).enumerated().map { index, text in
                    "250\(index == offered.count ? " " : "-")\(text)"
                }.joined(separator: "\r\n"))
            }
            if upper == "STARTTLS" { return .startTLS("220 2.0.0 Ready to start TLS") }
            if upper.hasPrefix("AUTH PLAIN ") { return .reply("235 2.7.0 Authentication successful") }
            if upper == "AUTH LOGIN" { return .reply("334 VXNlcm5hbWU6") }
            if context.previous.last?.uppercased() == "AUTH LOGIN" { return .reply("334 UGFzc3dvcmQ6") }
            if context.previous.dropLast().last?.uppercased() == "AUTH LOGIN" { return .reply("235 2.7.0 Authentication successful") }
            if upper.hasPrefix("MAIL FROM:") { return .reply("250 2.1.0 Ok") }
            if upper.hasPrefix("RCPT TO:") { return .reply("250 2.1.5 Ok") }
            if upper == "DATA" { return .reply("354 End data with <CR><LF>.<CR><LF>") }
            if upper == "RSET" { return .reply("250 2.0.0 Ok") }
            if upper == "QUIT" { return .replyAndClose("221 2.0.0 Bye") }
            return .reply("502 5.5.2 Error: command not recognized")
        }
    }

    private static func listen() throws -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, Glibc.listen(fd, 64) == 0 else {
            close(fd)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }
}

/// The server's side of one connection, plain or TLS. Waits are long but bounded: a test that
/// goes wrong ends, it does not hang.
private final class Channel {
    let fd: Int32
    private var tls: TLSConnection?
    private var buffer: [UInt8] = []

    init(fd: Int32) {
        self.fd = fd
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { tls?.shutdown() }

    var isEncrypted: Bool { tls != nil }

    func startTLS(_ context: TLSServerContext) -> Bool {
        guard let connection = try? context.makeConnection(fd: fd) else { return false }
        tls = connection
        buffer = []
        return (try? connection.handshake(until: .after(.seconds(60)))) != nil
    }

    func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            if let tls { return (try? tls.write(raw, until: .after(.seconds(60)))) != nil }
            var offset = 0
            while offset < raw.count {
                let sent = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if sent > 0 {
                    offset += sent
                } else if sent < 0, errno == EAGAIN || errno == EINTR {
                    guard Deadline.after(.seconds(60)).wait(for: fd, events: Int16(POLLOUT)) else { return false }
                } else {
                    return false
                }
            }
            return true
        }
    }

    /// A line without its CRLF; nil once the peer closed.
    func readLine() -> String? {
        while true {
            if let end = buffer.firstRange(of: [0x0D, 0x0A]) {
                let line = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer.removeFirst(end.upperBound)
                return line
            }
            guard fill() else { return nil }
        }
    }

    /// The bytes before `terminator` (or an empty message when the data starts with `start`).
    func readUntil(_ terminator: [UInt8], orStartingWith start: [UInt8]) -> [UInt8]? {
        while true {
            if buffer.starts(with: start) {
                buffer.removeFirst(start.count)
                return []
            }
            if let end = buffer.firstRange(of: terminator) {
                let message = Array(buffer[..<end.lowerBound]) + [0x0D, 0x0A]
                buffer.removeFirst(end.upperBound)
                return message
            }
            guard fill() else { return nil }
        }
    }

    func drainUntilClosed() {
        while fill() { buffer = [] }
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let deadline = Deadline.after(.seconds(120))
        let count: Int = chunk.withUnsafeMutableBytes { raw in
            if let tls { return (try? tls.read(into: raw, until: deadline)) ?? 0 }
            while true {
                let count = recv(fd, raw.baseAddress, raw.count, 0)
                if count >= 0 { return count }
                guard errno == EAGAIN || errno == EINTR, deadline.wait(for: fd, events: Int16(POLLIN)) else { return 0 }
            }
        }
        guard count > 0 else { return false }
        buffer += chunk[0..<count]
        return true
    }
}
