import COpenSSL
import Glibc

/// One TLS session over a socket the caller owns (and closes, after this object is gone).
/// The socket is made non-blocking; every wait is a poll bounded by a `Deadline`.
///
/// Not thread-safe: one thread at a time uses a connection.
public final class TLSConnection {
    private let ssl: OpaquePointer
    public let fd: Int32
    private var shutDown = false

    init(taking ssl: OpaquePointer, fd: Int32) {
        self.ssl = ssl
        self.fd = fd
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0, flags & O_NONBLOCK == 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    deinit { SSL_free(ssl) }

    /// What a non-blocking read found.
    public enum Availability: Equatable {
        case data(Int)
        case wouldBlock
        case endOfInput
    }

    private enum Step {
        case done(Int)
        case wait(Int16)
        case endOfInput
    }

    /// Runs the handshake, verifying the peer as the context says.
    public func handshake(until deadline: Deadline) throws(TLSError) {
        while true {
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            if result == 1 { return }
            let systemError = errno
            let error = SSL_get_error(ssl, result)
            switch error {
            case SSL_ERROR_WANT_READ:
                guard deadline.wait(for: fd, events: Int16(POLLIN)) else { throw .timedOut }
            case SSL_ERROR_WANT_WRITE:
                guard deadline.wait(for: fd, events: Int16(POLLOUT)) else { throw .timedOut }
            default:
                throw .handshake(handshakeReason(error: error, systemError: systemError))
            }
        }
    }

    private func handshakeReason(error: Int32, systemError: Int32) -> String {
        let verdict = SSL_get_verify_result(ssl)
        let queued = TLSError.drainReasons()
        if verdict != X509_V_OK {
            return "certificate verify failed: \(String(cString: X509_verify_cert_error_string(verdict)))"
        }
        if let queued { return queued }
        if error == SSL_ERROR_SYSCALL {
            return systemError == 0 ? "connection closed during the handshake" : TLSError.systemReason(systemError)
        }
        if error == SSL_ERROR_ZERO_RETURN { return "connection closed during the handshake" }
        return "error \(error)"
    }

    /// Reads what is there, waiting up to the deadline for something; 0 at end of input.
    public func read(into buffer: UnsafeMutableRawBufferPointer, until deadline: Deadline) throws(TLSError) -> Int {
        while true {
            switch try readStep(into: buffer) {
            case .done(let count): return count
            case .endOfInput: return 0
            case .wait(let events):
                guard deadline.wait(for: fd, events: events) else { throw .timedOut }
            }
        }
    }

    /// Reads without waiting for the network.
    public func readAvailable(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> Availability {
        switch try readStep(into: buffer) {
        case .done(let count): .data(count)
        case .endOfInput: .endOfInput
        case .wait: .wouldBlock
        }
    }

    private func readStep(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> Step {
        ERR_clear_error()
        var count = 0
        let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count)
        if result == 1 { return .done(count) }
        let systemError = errno
        return try classify(SSL_get_error(ssl, result), systemError: systemError)
    }

    /// Writes every byte, waiting as needed up to the deadline.
    public func write(_ bytes: UnsafeRawBufferPointer, until deadline: Deadline) throws(TLSError) {
        var offset = 0
        while offset < bytes.count {
            ERR_clear_error()
            var written = 0
            // A retried SSL_write must repeat the same buffer and length; `bytes` stays put.
            let result = SSL_write_ex(ssl, bytes.baseAddress! + offset, bytes.count - offset, &written)
            if result == 1 {
                offset += written
                continue
            }
            let systemError = errno
            switch try classify(SSL_get_error(ssl, result), systemError: systemError) {
            case .wait(let events):
                guard deadline.wait(for: fd, events: events) else { throw .timedOut }
            case .endOfInput, .done:
                throw .closed
            }
        }
    }

    /// Application bytes OpenSSL has decrypted but not yet handed out.
    public var bufferedByteCount: Int { Int(SSL_pending(ssl)) }

    private func classify(_ error: Int32, systemError: Int32) throws(TLSError) -> Step {
        switch error {
        case SSL_ERROR_WANT_READ: return .wait(Int16(POLLIN))
        case SSL_ERROR_WANT_WRITE: return .wait(Int16(POLLOUT))
        case SSL_ERROR_ZERO_RETURN: return .endOfInput
        case SSL_ERROR_SYSCALL, SSL_ERROR_SSL:
            // OpenSSL 3 also queues a system error as a reason; a reset peer is a close either way.
            let queuedSystemError = Self.queuedSystemError()
            let code = queuedSystemError ?? systemError
            if code == ECONNRESET || code == EPIPE {
                ERR_clear_error()
                throw .closed
            }
            let queued = TLSError.drainReasons()
            if let queued { throw .failed(queued) }
            if error == SSL_ERROR_SYSCALL {
                if systemError == 0 { return .endOfInput }
                throw .failed(TLSError.systemReason(systemError))
            }
            throw .failed("error \(error)")
        default:
            throw .failed(TLSError.drainReasons() ?? "error \(error)")
        }
    }

    /// The errno of the most recent system error on OpenSSL's queue, if that is what it holds.
    private static func queuedSystemError() -> Int32? {
        let code = ERR_peek_last_error()
        guard code != 0, ERR_GET_LIB(code) == ERR_LIB_SYS else { return nil }
        return ERR_GET_REASON(code)
    }

    /// Sends close_notify once, without waiting for the peer's; best effort.
    public func shutdown() {
        guard !shutDown else { return }
        shutDown = true
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }
}
