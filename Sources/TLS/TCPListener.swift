import Glibc

/// A listening TCP socket on an IP literal (or `localhost`, meaning 127.0.0.1).
public enum TCPListener {
    public static func open(host: String, port: UInt16, backlog: Int32 = 128) throws(TLSError) -> (fd: Int32, port: UInt16) {
        let literal = host == "localhost" ? "127.0.0.1" : host
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: Int32
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    $0.pointee.sin_family = sa_family_t(AF_INET)
                    $0.pointee.sin_port = port.bigEndian
                    $0.pointee.sin_addr = v4
                }
            }
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    $0.pointee.sin6_family = sa_family_t(AF_INET6)
                    $0.pointee.sin6_port = port.bigEndian
                    $0.pointee.sin6_addr = v6
                }
            }
        } else {
            throw .setup("listen address \(host) is not an IP address")
        }

        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .failed("socket: \(TLSError.systemReason(errno))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            // `::` serves IPv4 too, whatever the system default says.
            var zero: Int32 = 0
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw .failed("listen on \(host):\(port): \(TLSError.systemReason(code))")
        }
        var boundAddress = sockaddr_storage()
        var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &boundAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &boundLength) }
        }
        let boundPort = withUnsafePointer(to: &boundAddress) { pointer in
            family == AF_INET
                ? pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
                : pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
        }
        return (fd, boundPort)
    }
}
