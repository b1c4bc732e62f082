import Foundation
import Glibc

/// A blocking TCP client that sends exact bytes and reads raw responses, so tests see the
/// wire as a hostile or unusual client would.
final class RawClient: @unchecked Sendable {
    struct Response: Sendable {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        var text: String { String(decoding: body, as: UTF8.self) }
    }

    enum Failure: Error { case connect(Int32), timeout, closed, malformed(String) }

    let fd: Int32
    private var buffer: [UInt8] = []

    /// `source`, an IPv6 address of this machine, is the address the client connects from.
    init(port: UInt16, host: String = "127.0.0.1", source: String? = nil, timeoutSeconds: Int = 60) throws {
        let isV6 = host.contains(":")
        fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var result: Int32
        if let source {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            inet_pton(AF_INET6, source, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
            if result != 0 { throw Failure.connect(errno) }
        }
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        if result != 0 {
            // No close here: a class whose init throws after every property is set still runs
            // deinit, which closes `fd`. Closing twice could close a descriptor the number was
            // reused for in the meantime — another test's connection.
            throw Failure.connect(errno)
        }
    }

    deinit { close(fd) }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads more bytes; false on EOF, throws on timeout.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = recv(fd, &chunk, chunk.count, 0)
        if count > 0 {
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        if count == 0 { return false }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure.timeout }
        return false  // ECONNRESET and friends: treat as closed
    }

    /// Reads one response off the cooperative pool. `head` says the request was HEAD (no body
    /// despite Content-Length).
    func readResponse(head: Bool = false) async throws -> Response {
        try await offPool { try self.readResponseBlocking(head: head) }
    }

    func readResponseBlocking(head: Bool = false) throws -> Response {
        var headEnd: Int?
        while headEnd == nil {
            if let range = findHeadEnd() { headEnd = range; break }
            guard try fill() else { throw Failure.closed }
        }
        let headText = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure.malformed(statusLine) }
        let headers = lines.filter { !$0.isEmpty }.map { line -> (String, String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        buffer.removeFirst(headEnd! + 4)
        let length = head || status == 204 || status == 304 || status < 200
            ? 0 : Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
        while buffer.count < length {
            guard try fill() else { throw Failure.closed }
        }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return Response(status: status, headers: headers, body: body)
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// True when the server closes the connection (EOF or reset) within the timeout, with no
    /// further bytes.
    func isClosedByServer() async -> Bool {
        (try? await offPool { self.isClosedByServerBlocking() }) ?? false
    }

    func isClosedByServerBlocking() -> Bool {
        do {
            while try fill() {}
            return true
        } catch {
            return false
        }
    }

    /// What one read returns (at most 64 KiB): the first bytes of a long answer, without
    /// reading the rest.
    func readSomeBlocking() throws -> [UInt8] {
        guard try fill() else { return [] }
        defer { buffer.removeAll() }
        return buffer
    }

    /// Everything until the server closes.
    func readAll() async -> [UInt8] {
        (try? await offPool { self.readAllBlocking() }) ?? []
    }

    func readAllBlocking() -> [UInt8] {
        while (try? fill()) == true {}
        defer { buffer.removeAll() }
        return buffer
    }
}
