import CSystem
import Glibc
import TLS

/// Why moving bytes failed.
enum TransportError: Error {
    case timedOut
    /// End of input, reset, or broken pipe: the peer is gone.
    case closed
    /// A TLS protocol error on an established connection.
    case tls(String)
}

/// One connected socket, plain or TLS, that moves bytes with every wait bounded by a deadline.
/// Owned by one thread at a time: the worker using it, or the pool holding it idle.
final class ClientConnection: @unchecked Sendable {
    let fd: Int32
    private let tls: TLSConnection?
    /// When it was last returned to the pool (monotonic nanoseconds).
    var idleSince: UInt64 = 0

    init(fd: Int32, tls: TLSConnection?) {
        self.fd = fd
        self.tls = tls
    }

    deinit {
        tls?.shutdown()
        close(fd)
    }

    func write(_ bytes: [UInt8], until deadline: Deadline) throws(TransportError) {
        let outcome: Result<Void, TransportError> = bytes.withUnsafeBytes { buffer in
            if let tls {
                do throws(TLSError) {
                    try tls.write(buffer, until: deadline)
                    return .success(())
                } catch {
                    return .failure(Self.transportError(error))
                }
            }
            var offset = 0
            while offset < buffer.count {
                let sent = send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if sent > 0 {
                    offset += sent
                } else if sent < 0, errno == EAGAIN || errno == EINTR {
                    guard deadline.wait(for: fd, events: Int16(POLLOUT)) else { return .failure(.timedOut) }
                } else {
                    return .failure(.closed)
                }
            }
            return .success(())
        }
        try outcome.get()
    }

    /// Reads what has arrived, waiting up to the deadline; 0 at end of input.
    func read(into buffer: UnsafeMutableRawBufferPointer, until deadline: Deadline) throws(TransportError) -> Int {
        if let tls {
            do throws(TLSError) {
                return try tls.read(into: buffer, until: deadline)
            } catch {
                throw Self.transportError(error)
            }
        }
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count >= 0 { return count }
            if errno == EAGAIN || errno == EINTR {
                guard deadline.wait(for: fd, events: Int16(POLLIN)) else { throw .timedOut }
                continue
            }
            throw .closed
        }
    }

    /// Whether an idle connection can carry another request: nothing may have arrived since
    /// the last response. End of input (the server closed it) or stray bytes both disqualify
    /// it. For TLS, records that carry no application data (a session ticket, a key update)
    /// are consumed and ignored; close_notify means closed.
    func isReusable() -> Bool {
        var probe: UInt8 = 0
        for _ in 0..<8 {
            let peeked = recv(fd, &probe, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
            if peeked < 0 { return errno == EAGAIN || errno == EWOULDBLOCK }
            guard peeked > 0, let tls else { return false }
            var scratch = [UInt8](repeating: 0, count: 512)
            let availability = scratch.withUnsafeMutableBytes { try? tls.readAvailable(into: $0) }
            guard availability == .wouldBlock else { return false }
        }
        return false
    }

    private static func transportError(_ error: TLSError) -> TransportError {
        switch error {
        case .timedOut: .timedOut
        case .closed: .closed
        case .setup(let reason), .handshake(let reason), .failed(let reason): .tls(reason)
        }
    }
}
