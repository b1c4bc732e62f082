import Foundation
import Glibc

/// IPv6 addresses put on the loopback device for one test and taken off after it: the machine's
/// loopback has only `::1`, and clients at several addresses of one /64 need more. Each instance
/// takes /64s of its own at random in the unique local range (fd00::/8), so runs side by side
/// never share one and no other traffic goes there. Needs root (CAP_NET_ADMIN).
final class LoopbackAddresses: @unchecked Sendable {
    enum Failure: Error { case system(String, Int32), notUsable(String) }

    static var isAvailable: Bool {
        geteuid() == 0 && ((try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8))?.contains(" lo\n") ?? false)
    }

    /// `fdXX:XXXX:XXXX:` — a random /48; a test's /64s are this plus one more group.
    let prefix = "fd" + String(format: "%02x:%04x:%04x:", UInt8.random(in: 0...255), UInt16.random(in: 0...UInt16.max), UInt16.random(in: 0...UInt16.max))
    private var added: [String] = []
    private let control: Int32

    /// Each suffix completed with `prefix` (`"1::a"` becomes `fdXX:XXXX:XXXX:1::a`) is put on
    /// the loopback device, on a /64.
    init(_ suffixes: [String]) throws {
        control = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
        guard control >= 0 else { throw Failure.system("socket", errno) }
        for suffix in suffixes {
            let address = prefix + suffix
            try change(address, request: 0x8916 /* SIOCSIFADDR */)
            added.append(address)
        }
    }

    deinit {
        for address in added { try? change(address, request: 0x8936 /* SIOCDIFADDR */) }
        close(control)
    }

    /// The full address of a suffix given to `init`.
    func address(_ suffix: String) -> String { prefix + suffix }

    /// Waits (bounded) until every address can be bound: a new address is tentative until the
    /// kernel has settled it, which on the loopback device takes a moment and no probing.
    func waitUntilUsable() async throws {
        for address in added {
            var rounds = 0
            while !Self.canBind(address) {
                rounds += 1
                guard rounds < 500 else { throw Failure.notUsable(address) }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// `struct in6_ifreq` (linux/ipv6.h): the address, the prefix length, the interface index.
    private func change(_ address: String, request: UInt) throws {
        var buffer = [UInt8](repeating: 0, count: 24)
        try buffer.withUnsafeMutableBytes { raw in
            guard inet_pton(AF_INET6, address, raw.baseAddress) == 1 else { throw Failure.system("inet_pton \(address)", EINVAL) }
            raw.storeBytes(of: UInt32(64), toByteOffset: 16, as: UInt32.self)
            raw.storeBytes(of: Int32(bitPattern: if_nametoindex("lo")), toByteOffset: 20, as: Int32.self)
            guard ioctl(control, request, raw.baseAddress!) == 0 else { throw Failure.system("ioctl \(address)", errno) }
        }
    }

    private static func canBind(_ address: String) -> Bool {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var socketAddress = sockaddr_in6()
        socketAddress.sin6_family = sa_family_t(AF_INET6)
        inet_pton(AF_INET6, address, &socketAddress.sin6_addr)
        return withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        } == 0
    }
}
