import Glibc
import TLS

/// The parts of a request URL the client needs, checked: `http(s)://host[:port][/path][?query]`.
/// No user info (it would be sent nowhere and only hide the real host); the fragment is dropped;
/// the path and query must already be percent-encoded ASCII.
struct RequestURL: Sendable, Equatable {
    enum Scheme: String, Sendable {
        case http, https
    }

    let scheme: Scheme
    /// Lower-cased; an IPv6 literal without its brackets.
    let host: String
    let port: UInt16
    /// Path and query, starting with `/`.
    let target: String

    init(_ text: String) throws(HTTPClientError) {
        let bytes = Array(text.utf8)
        let rest: ArraySlice<UInt8>
        if Self.hasPrefix(bytes, "https://") {
            scheme = .https
            rest = bytes[8...]
        } else if Self.hasPrefix(bytes, "http://") {
            scheme = .http
            rest = bytes[7...]
        } else {
            throw .invalidURL
        }
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        guard !authority.contains(UInt8(ascii: "@")) else { throw .invalidURL }

        let hostPart: ArraySlice<UInt8>
        let portPart: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { throw .invalidURL }
            hostPart = authority[(authority.startIndex + 1)..<close]
            let after = authority[(close + 1)...]
            if after.isEmpty {
                portPart = nil
            } else {
                guard after.first == UInt8(ascii: ":") else { throw .invalidURL }
                portPart = after.dropFirst()
            }
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(decoding: hostPart, as: UTF8.self), &address) == 1 else { throw .invalidURL }
        } else if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
            hostPart = authority[authority.startIndex..<colon]
            portPart = authority[(colon + 1)...]
        } else {
            hostPart = authority
            portPart = nil
        }
        guard !hostPart.isEmpty, hostPart.count <= 253, hostPart.allSatisfy(Self.isHostByte) else { throw .invalidURL }
        host = String(decoding: hostPart.map(ASCII.lower), as: UTF8.self)

        if let portPart {
            guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let number = Int(String(decoding: portPart, as: UTF8.self)), number >= 1, number <= 65_535
            else { throw .invalidURL }
            port = UInt16(number)
        } else {
            port = scheme == .https ? 443 : 80
        }

        var targetBytes = rest[authorityEnd...]
        if let hash = targetBytes.firstIndex(of: UInt8(ascii: "#")) { targetBytes = targetBytes[..<hash] }
        guard targetBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .invalidURL }
        let path = String(decoding: targetBytes, as: UTF8.self)
        target = path.hasPrefix("/") ? path : "/" + path

        if scheme == .http, !isLoopback { throw .plainHTTPNotAllowed }
    }

    /// `localhost`, `127.0.0.0/8` or `::1` (also IPv4-mapped `::ffff:127.x.y.z`).
    var isLoopback: Bool { AddressFamily.isLoopback(host: host) }

    var isIPv6Literal: Bool { host.contains(":") }

    /// The `Host` header: the port only when it is not the scheme's default.
    var hostHeader: String {
        let name = isIPv6Literal ? "[\(host)]" : host
        let defaultPort: UInt16 = scheme == .https ? 443 : 80
        return port == defaultPort ? name : "\(name):\(port)"
    }

    /// Connections are pooled per scheme, host and port.
    var poolKey: String { "\(scheme.rawValue)://\(hostHeader):\(port)" }

    private static func hasPrefix(_ bytes: [UInt8], _ prefix: String) -> Bool {
        let prefix = Array(prefix.utf8)
        return bytes.count >= prefix.count && zip(bytes, prefix).allSatisfy { ASCII.lower($0) == $1 }
    }

    /// Letters, digits, `-`, `.`, `_`, and `:` for IPv6 literals (already checked by inet_pton).
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"):
            true
        default: false
        }
    }
}
