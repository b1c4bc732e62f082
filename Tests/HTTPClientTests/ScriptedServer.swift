import Foundation
import Glibc

/// A plain TCP server on loopback whose every answer is scripted byte for byte: keep-alive,
/// closing after (or instead of) a response, stalling, malformed or oversized bodies. It counts
/// connections and requests so tests can see what reached it.
final class ScriptedServer: @unchecked Sendable {
    enum Action {
        case respond([UInt8])
        case respondAndClose([UInt8])
        /// Reads the request, then closes without a byte of response.
        case closeWithoutResponse
        /// Reads the request and never answers.
        case stall
    }

    struct Request: Sendable {
        var connection: Int
        var head: String
        var body: [UInt8]

        var requestLine: String { String(head.prefix { $0 != "\r" }) }
    }

    /// Connection number (from 0), request number on that connection (from 0), the request.
    typealias Script = @Sendable (_ connection: Int, _ index: Int, _ request: Request) -> Action

    let port: UInt16
    private let listenerFD: Int32
    private let script: Script
    private let lock = NSLock()
    private var accepted = 0
    private var received: [Request] = []
    private var openFDs: Set<Int32> = []
    private var closed = 0
    private var stopped = false
    private let finished = DispatchGroup()

    init(script: @escaping Script) throws {
        self.script = script
        (listenerFD, port) = try LoopbackSocket.listen(backlog: 64)
        finished.enter()
        Thread.detachNewThread { [self] in
            acceptLoop()
            finished.leave()
        }
    }

    var acceptedConnections: Int { lock.withLock { accepted } }
    var requests: [Request] { lock.withLock { received } }
    /// Connections this side has closed (counted once `close` has returned).
    var closedConnections: Int { lock.withLock { closed } }

    func stop() {
        // shutdown wakes the blocked accept and recv calls; each thread closes its own socket,
        // after removing it here under the lock, so no reused descriptor number is shut down.
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
                serve(fd: fd, connection: number)
                lock.withLock { _ = openFDs.remove(fd) }
                close(fd)
                lock.withLock { closed += 1 }
                finished.leave()
            }
        }
    }

    private func serve(fd: Int32, connection: Int) {
        var buffer: [UInt8] = []
        var index = 0
        while let request = readRequest(fd: fd, connection: connection, buffer: &buffer) {
            lock.withLock { received.append(request) }
            switch script(connection, index, request) {
            case .respond(let bytes):
                guard sendAll(fd, bytes) else { return }
            case .respondAndClose(let bytes):
                _ = sendAll(fd, bytes)
                return
            case .closeWithoutResponse:
                return
            case .stall:
                var byte: UInt8 = 0
                while recv(fd, &byte, 1, 0) > 0 {}
                return
            }
            index += 1
        }
    }

    /// One request: a head, then a Content-Length body. Nil once the peer closes.
    private func readRequest(fd: Int32, connection: Int, buffer: inout [UInt8]) -> Request? {
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let range = buffer.firstRange(of: terminator) {
                let head = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                let length = head.split(separator: "\r\n").dropFirst().compactMap { line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                    return Int(parts[1].trimmingCharacters(in: .whitespaces))
                }.first ?? 0
                let bodyStart = range.upperBound
                while buffer.count < bodyStart + length {
                    guard fill(fd, &buffer) else { return nil }
                }
                let request = Request(connection: connection, head: head, body: Array(buffer[bodyStart..<(bodyStart + length)]))
                buffer.removeFirst(bodyStart + length)
                return request
            }
            guard fill(fd, &buffer) else { return nil }
        }
    }

    private func fill(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    private func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }
}

/// Raw loopback sockets for tests.
enum LoopbackSocket {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A listening socket on 127.0.0.1 with a free port.
    static func listen(backlog: Int32) throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, Glibc.listen(fd, backlog) == 0 else {
            close(fd)
            throw Failure(description: "listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        return address
    }

    /// Starts a non-blocking connect; true if it completed within `milliseconds`.
    static func connectNonBlocking(port: UInt16, milliseconds: Int32) -> (fd: Int32, connected: Bool) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result == 0 { return (fd, true) }
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&descriptor, 1, milliseconds) == 1 else { return (fd, false) }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return (fd, error == 0)
    }
}

/// Response bytes for scripts.
enum RawResponse {
    static func ok(_ body: String, extraHeaders: String = "") -> [UInt8] {
        Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\(extraHeaders)\r\n\(body)".utf8)
    }
}
