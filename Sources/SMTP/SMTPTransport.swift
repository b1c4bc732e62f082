import Glibc
import TLS

/// One connected socket to the SMTP server, plain until `startTLS` and encrypted after, that
/// writes commands and reads whole replies, every wait bounded by a deadline.
/// Used by one thread at a time.
final class SMTPTransport {
    enum Failure: Error, Equatable {
        case timedOut
        /// End of input, reset or broken pipe: the server is gone.
        case closed
        case tls(String)
        case malformed(SMTPReplyParser.Failure)
        /// Bytes arrived after the reply to `STARTTLS`, before the handshake.
        case bytesBeforeHandshake
    }

    private let fd: Int32
    private var tls: TLSConnection?
    private var parser = SMTPReplyParser()
    private var readBuffer = [UInt8](repeating: 0, count: 4096)

    /// Takes ownership of the connected non-blocking socket `fd`.
    init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        tls?.shutdown()
        close(fd)
    }

    var isEncrypted: Bool { tls != nil }

    /// The socket's own address, for an `EHLO` address literal.
    var localAddress: sockaddr_storage {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return storage
    }

    /// Runs the TLS handshake on the socket; from then on every byte goes through TLS.
    func startTLS(context: TLSClientContext, hostName: String, until deadline: Deadline) throws(Failure) {
        guard parser.isBetweenReplies else { throw .bytesBeforeHandshake }
        do throws(TLSError) {
            let connection = try context.makeConnection(fd: fd, hostName: hostName)
            tls = connection
            try connection.handshake(until: deadline)
        } catch {
            throw Self.failure(error)
        }
    }

    func send(_ bytes: [UInt8], until deadline: Deadline) throws(Failure) {
        let outcome: Result<Void, Failure> = bytes.withUnsafeBytes { buffer in
            if let tls {
                do throws(TLSError) {
                    try tls.write(buffer, until: deadline)
                    return .success(())
                } catch {
                    return .failure(Self.failure(error))
                }
            }
            var offset = 0
            while offset < buffer.count {
                let sent = Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
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

    /// The next whole reply, reading as much as it takes.
    func readReply(until deadline: Deadline) throws(Failure) -> SMTPReply {
        while true {
            do throws(SMTPReplyParser.Failure) {
                if let reply = try parser.next() { return reply }
            } catch {
                throw .malformed(error)
            }
            let count = try read(until: deadline)
            if count == 0 { throw .closed }
            parser.append(readBuffer[0..<count])
        }
    }

    private func read(until deadline: Deadline) throws(Failure) -> Int {
        // withUnsafeMutableBytes does not carry a typed error through; the outcome travels as a Result.
        let outcome: Result<Int, Failure> = readBuffer.withUnsafeMutableBytes { buffer in
            if let tls {
                do throws(TLSError) {
                    return .success(try tls.read(into: buffer, until: deadline))
                } catch {
                    return .failure(Self.failure(error))
                }
            }
            while true {
                let count = recv(fd, buffer.baseAddress, buffer.count, 0)
                if count >= 0 { return .success(count) }
                guard errno == EAGAIN || errno == EINTR else { return .failure(.closed) }
                guard deadline.wait(for: fd, events: Int16(POLLIN)) else { return .failure(.timedOut) }
            }
        }
        return try outcome.get()
    }

    private static func failure(_ error: TLSError) -> Failure {
        switch error {
        case .timedOut: .timedOut
        case .closed: .closed
        case .setup(let reason), .handshake(let reason), .failed(let reason): .tls(reason)
        }
    }
}
