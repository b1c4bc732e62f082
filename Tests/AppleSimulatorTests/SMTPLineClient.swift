import Glibc

/// A blocking SMTP client that sends exact lines and reads raw replies, for what `SMTPClient`
/// never does: stall halfway, send oversized lines, pipeline, speak out of order. Use it from
/// `onOwnThread`; every read gives up after `timeoutSeconds`.
final class SMTPLineClient: @unchecked Sendable {
    struct Reply: Equatable, CustomStringConvertible {
        let code: Int
        let text: String
        var description: String { "\(code) \(text)" }
    }

    enum Failure: Error { case connect(Int32), closed, malformed(String) }

    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16, timeoutSeconds: Int = 30) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // deinit closes `fd` even when this throws.
        if result != 0 { throw Failure.connect(errno) }
    }

    deinit { close(fd) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// One reply, its continuation lines joined by newlines.
    func reply() throws -> Reply {
        var lines: [String] = []
        while true {
            let line = try readLine()
            guard line.count >= 3, let code = Int(line.prefix(3)) else { throw Failure.malformed(line) }
            lines.append(String(line.dropFirst(4)))
            if line.count == 3 || line[line.index(line.startIndex, offsetBy: 3)] == " " { return Reply(code: code, text: lines.joined(separator: "\n")) }
        }
    }

    /// Sends `line` and CRLF and reads the reply.
    func command(_ line: String) throws -> Reply {
        send(line + "\r\n")
        return try reply()
    }

    /// Whether the server closed the connection (after any bytes still unread).
    func readsEndOfStream() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { return count == 0 || errno == ECONNRESET }
        }
    }

    private func readLine() throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[..<newline].last == 0x0D ? buffer[..<(newline - 1)] : buffer[..<newline]
                defer { buffer.removeFirst(newline + 1) }
                return String(decoding: line, as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { throw Failure.closed }
            buffer += chunk[..<count]
        }
    }
}
