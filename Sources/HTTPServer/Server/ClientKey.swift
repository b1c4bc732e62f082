import Glibc

/// Whom a peer address counts as, for every per-client limit: the connection cap here and the
/// application's rate limits alike, so that the two can never disagree about who one client is.
///
/// An IPv4 client is its address (an IPv4-mapped IPv6 address is that IPv4 address). An IPv6
/// client is its /64, the smallest block a single host is usually given: counted per address,
/// one machine could rotate through 2^64 of them.
public struct ClientKey: Hashable, Sendable {
    /// 4 bytes for IPv4, the first 8 of the address for IPv6; text that is no address at all
    /// is kept as its UTF-8 bytes, so it still counts as someone.
    public let bytes: [UInt8]

    /// `address` is IPv4 or IPv6 text, IPv6 optionally in brackets.
    public init(address: String) {
        var text = Substring(address)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let v4 = Self.parse(String(text), family: AF_INET, size: 4) {
            bytes = v4
        } else if let v6 = Self.parse(String(text), family: AF_INET6, size: 16) {
            let isMappedIPv4 = v6[0..<10].allSatisfy { $0 == 0 } && v6[10] == 0xFF && v6[11] == 0xFF
            bytes = isMappedIPv4 ? Array(v6[12..<16]) : Array(v6[0..<8])
        } else {
            bytes = Array(address.utf8)
        }
    }

    private static func parse(_ text: String, family: Int32, size: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: size)
        let result = bytes.withUnsafeMutableBytes { raw in inet_pton(family, text, raw.baseAddress) }
        return result == 1 ? bytes : nil
    }
}
