#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address written as text, read with `inet_pton` so that what we accept is
/// exactly what the C library (and so the socket layer) accepts.
struct IPAddressLiteral: Equatable, Sendable {
    /// 4 bytes for IPv4, 16 for IPv6, network order.
    let bytes: [UInt8]

    var isIPv6: Bool { bytes.count == 16 }

    init?(_ text: String) {
        if let v4 = Self.parse(text, family: AF_INET, size: 4) {
            bytes = v4
        } else if let v6 = Self.parse(text, family: AF_INET6, size: 16) {
            bytes = v6
        } else {
            return nil
        }
    }

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`), which is how a
    /// socket bound to `[::]` sees IPv4 clients.
    var unmappedIPv4: IPAddressLiteral? {
        guard isIPv6, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return nil }
        return IPAddressLiteral(bytes: Array(bytes[12..<16]))
    }

    var isLoopback: Bool {
        if isIPv6 {
            if let v4 = unmappedIPv4 { return v4.isLoopback }
            return bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
        }
        return bytes[0] == 127
    }

    var text: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = isIPv6 ? AF_INET6 : AF_INET
        let ok = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil
        }
        guard ok else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func parse(_ text: String, family: Int32, size: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: size)
        let result = bytes.withUnsafeMutableBytes { raw in
            inet_pton(family, text, raw.baseAddress)
        }
        return result == 1 ? bytes : nil
    }
}
