import Glibc
import TLS

/// One accepted SMTP connection's socket (non-blocking): lines in, each bounded in length and
/// in time, and replies out, bounded in time. The buffer never holds more than one line's
/// limit and one read, whatever the client sends.
struct SMTPSocket {
    enum Line: Equatable {
        /// Without its line end (CRLF, or a bare LF from a lenient client).
        case line([UInt8])
        /// Longer than the limit; the rest of it, up to its line end, was read and dropped.
        case tooLong
        case closed
        case timedOut
    }

    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private static let readSize = 16 * 1024

    init(fd: Int32) {
        self.fd = fd
    }

    /// The next line of at most `limit` octets (its line end not counted).
    mutating func readLine(limit: Int, until deadline: Deadline) -> Line {
        var scanned = start
        var discarding = false
        while true {
            if let newline = buffer[scanned...].firstIndex(of: 0x0A) {
                let end = newline > start && buffer[newline - 1] == 0x0D ? newline - 1 : newline
                let line = Array(buffer[start..<end])
                start = newline + 1
                compact()
                if discarding || line.count > limit { return .tooLong }
                return .line(line)
            }
            if buffer.count - start > limit + 1 {
                // Far past the limit: forget what came so far and look only for the line end.
                discarding = true
                buffer.removeAll(keepingCapacity: true)
                start = 0
            }
            scanned = buffer.count
            switch fill(until: deadline) {
            case .some(true): continue
            case .some(false): return .closed
            case .none: return .timedOut
            }
        }
    }

    /// Reads what is there; false at the end of the stream or on an error, nil at the deadline.
    private mutating func fill(until deadline: Deadline) -> Bool? {
        var chunk = [UInt8](repeating: 0, count: Self.readSize)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[..<count]
                return true
            }
            if count == 0 { return false }
            if errno == EINTR { continue }
            guard errno == EAGAIN || errno == EWOULDBLOCK else { return false }
            guard deadline.wait(for: fd, events: Int16(POLLIN)) else { return nil }
        }
    }

    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            start = 0
        } else if start > 64 * 1024 {
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// Sends `reply` and CRLF; false when the client does not take it by `deadline` or is gone.
    func write(_ reply: String, until deadline: Deadline) -> Bool {
        let bytes = Array((reply + "\r\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                sent += count
                continue
            }
            if count < 0, errno == EINTR { continue }
            guard count < 0, errno == EAGAIN || errno == EWOULDBLOCK, deadline.wait(for: fd, events: Int16(POLLOUT)) else { return false }
        }
        return true
    }
}
