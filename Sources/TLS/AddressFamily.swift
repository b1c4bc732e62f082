import Glibc

/// Loopback tests on addresses and host names: plain-text protocols (`http://`, `smtp://`
/// without STARTTLS) are allowed only to this machine.
public enum AddressFamily {
    public static func isLoopback(_ address: in6_addr) -> Bool {
        var address = address
        return withUnsafeBytes(of: &address) { bytes in
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
            // ::ffff:127.x.y.z
            return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
        }
    }

    public static func isLoopback(_ address: in_addr) -> Bool {
        UInt32(bigEndian: address.s_addr) >> 24 == 127
    }

    /// `localhost`, `127.0.0.0/8` or `::1` (also IPv4-mapped `::ffff:127.x.y.z`), for a
    /// lower-cased host name or an IP literal without brackets.
    public static func isLoopback(host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return isLoopback(v4) }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return isLoopback(v6) }
        return false
    }
}
