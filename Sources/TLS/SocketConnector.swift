import Glibc

/// Resolves a host (IPv4 and IPv6) and connects to the first address that answers, without
/// blocking past the deadline. Shared by the HTTPS client and the SMTP client.
public enum SocketConnector {
    /// Why no connection was made. The reasons name the host and the system's error.
    public enum Failure: Error, Sendable, Equatable {
        case timedOut
        /// `loopbackOnly` was asked and the host resolved to no loopback address.
        case notLoopback
        case failed(String)
    }

    /// A connected non-blocking socket, which the caller owns.
    /// - Parameter loopbackOnly: for plain-text protocols: every address used must be
    ///   loopback, whatever the resolver says `localhost` is.
    public static func connect(host: String, port: UInt16, loopbackOnly: Bool, until deadline: Deadline) throws(Failure) -> Int32 {
        let addresses = try resolve(host: host, port: port)
        let usable = loopbackOnly ? addresses.filter(\.isLoopback) : addresses
        guard !usable.isEmpty else { throw loopbackOnly ? .notLoopback : .failed("\(host): no address") }

        var lastError: Int32 = 0
        for address in usable {
            if deadline.hasPassed { throw .timedOut }
            let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = errno
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let started = address.storage.withUnsafeBytes { raw in
                Glibc.connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), address.length)
            }
            if started == 0 { return fd }
            guard errno == EINPROGRESS || errno == EINTR else {
                lastError = errno
                close(fd)
                continue
            }
            guard deadline.wait(for: fd, events: Int16(POLLOUT)) else {
                close(fd)
                throw .timedOut
            }
            var result: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &result, &length)
            if result == 0 { return fd }
            lastError = result
            close(fd)
        }
        throw .failed("\(host):\(port): \(String(cString: strerror(lastError)))")
    }

    struct Address {
        var family: Int32
        var storage: [UInt8]
        var length: socklen_t

        var isLoopback: Bool {
            storage.withUnsafeBytes { raw in
                if family == AF_INET {
                    return AddressFamily.isLoopback(raw.loadUnaligned(as: sockaddr_in.self).sin_addr)
                }
                if family == AF_INET6 {
                    return AddressFamily.isLoopback(raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr)
                }
                return false
            }
        }
    }

    /// getaddrinfo blocks; callers run on threads of their own. Its own timeouts
    /// (resolv.conf) bound it, not our deadline.
    static func resolve(host: String, port: UInt16) throws(Failure) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        // No AI_ADDRCONFIG: on a host with only loopback configured it hides `localhost`.
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            let reason = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            throw .failed("resolve \(host): \(reason)")
        }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            let info = current.pointee
            if let address = info.ai_addr, info.ai_family == AF_INET || info.ai_family == AF_INET6 {
                let bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(info.ai_addrlen)))
                addresses.append(Address(family: info.ai_family, storage: bytes, length: info.ai_addrlen))
            }
            entry = info.ai_next
        }
        return addresses
    }
}
