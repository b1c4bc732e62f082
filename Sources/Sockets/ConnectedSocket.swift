import CSystem
import Glibc

/// A connected, non-blocking stream socket, with the calls a connection makes on it and their
/// outcomes named, so the code that speaks HTTP over it needs no errno.
package struct ConnectedSocket {
    package let fd: Int32

    package init(fd: Int32) {
        self.fd = fd
    }

    package enum ReadResult {
        case bytes(Int)
        /// The peer closed its sending side.
        case end
        case wouldBlock
        case failed
    }

    /// Reads what is available into `buffer`.
    @inlinable
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
        if count > 0 { return .bytes(count) }
        if count == 0 { return .end }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wouldBlock : .failed
    }

    package enum SendResult {
        case sent(Int)
        /// The socket's buffer is full: wait until it is writable.
        case wouldBlock
        case failed
    }

    /// Sends as much of `bytes` as the socket takes (never a signal: the peer may be gone).
    @inlinable
    package func send(_ bytes: UnsafeRawBufferPointer) -> SendResult {
        while true {
            let sent = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if sent >= 0 { return .sent(sent) }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .failed
        }
    }

    /// Half-closes: the peer reads the end of the output, and input can still be drained.
    package func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Small answers go out at once rather than waiting to be merged (Nagle's algorithm).
    package func setNoDelay() {
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    package func close() {
        _ = Glibc.close(fd)
    }
}
