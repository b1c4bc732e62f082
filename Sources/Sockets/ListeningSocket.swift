import CSystem
import Glibc

/// Opens the listening socket. One socket serves every I/O loop: each registers it with
/// `EPOLLEXCLUSIVE`, so a new connection wakes one idle loop. (`SO_REUSEPORT` sockets would
/// balance as well, but would also let a second process of the same user silently share the
/// port, so an address already in use would not be reported.)
package enum ListeningSocket {
    /// Binds and listens; returns the descriptor and the port actually bound.
    package static func open(host: String, port: UInt16) throws -> (fd: Int32, port: UInt16) {
        let literal = host == "localhost" ? "127.0.0.1" : host
        var v4 = in_addr()
        var v6 = in6_addr()
        let family: Int32
        if inet_pton(AF_INET, literal, &v4) == 1 {
            family = AF_INET
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            family = AF_INET6
        } else {
            throw SocketError("listen address \(host) is not an IP address", code: EINVAL)
        }

        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        do {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            if family == AF_INET6 {
                // `[::]` serves IPv4 too, whatever the system default says.
                try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0)
            }
            let bound: Int32
            if family == AF_INET {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                address.sin_addr = v4
                bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            } else {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = port.bigEndian
                address.sin6_addr = v6
                bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
                }
            }
            guard bound == 0 else { throw SocketError("bind \(host):\(port)") }
            guard listen(fd, 4096) == 0 else { throw SocketError("listen") }
            return (fd, try localPort(fd))
        } catch {
            close(fd)
            throw error
        }
    }

    /// What one `accept` on the listener gave.
    package enum Accepted {
        /// A new connection, non-blocking and close-on-exec, from `peer` (`formatAddress`).
        case connection(fd: Int32, peer: String)
        /// None waiting (or one the peer gave up on): nothing to do until the next wake-up.
        case none
        /// The process is out of descriptors or memory: pause accepting rather than spin.
        case outOfResources
        case failed(SocketError)
    }

    /// Takes one waiting connection from `listenerFD`.
    package static func accept(_ listenerFD: Int32) -> Accepted {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                accept4(listenerFD, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            }
        }
        guard fd < 0 else { return .connection(fd: fd, peer: formatAddress(address)) }
        switch errno {
        case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED: return .none
        case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .outOfResources
        default: return .failed(SocketError("accept4"))
        }
    }

    package static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SocketError("setsockopt")
        }
    }

    private static func localPort(_ fd: Int32) throws -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw SocketError("getsockname") }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer in
            if family == sa_family_t(AF_INET) {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
        }
    }

    /// The peer's IP address as text; IPv4-mapped IPv6 addresses are shown as IPv4.
    package static func formatAddress(_ storage: sockaddr_storage) -> String {
        var storage = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer -> String in
            if family == sa_family_t(AF_INET) {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var ip = address.pointee.sin_addr
                    inet_ntop(AF_INET, &ip, &text, socklen_t(text.count))
                    return cString(text)
                }
            }
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var ip = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count))
                    let formatted = cString(text)
                    return formatted.hasPrefix("::ffff:") && formatted.contains(".") ? String(formatted.dropFirst(7)) : formatted
                }
            }
            return "unknown"
        }
    }

    private static func cString(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Lets one process hold the 10,000+ descriptors that many keep-alive clients need.
    package static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = min(limit.rlim_max, 1 << 20)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
