import Accounts
/// Where the server binds: an IP literal and a port (`0` lets the system pick one, for tests).
public struct ListenAddress: Equatable, Sendable, CustomStringConvertible {
    /// An IPv4 or IPv6 literal, IPv6 without brackets (`::1`).
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public var isIPv6: Bool { host.contains(":") }

    /// `127.0.0.1:8080`, or `[::1]:8080` for IPv6.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Reads `127.0.0.1:8080`, `[::]:8080` or `localhost:8080`. Only IP literals and `localhost`
    /// are accepted: a name resolving to several addresses would make "where do we listen" vague.
    public static func parse(_ text: String) throws(ConfigurationError) -> ListenAddress {
        let example = "(e.g. 127.0.0.1:8080, 0.0.0.0:8080, [::]:8080)"
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw ConfigurationError(.listen, "\(ConfigurationError.quote(text)) is not host:port \(example)")
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                let hint = parts.count > 2 ? "; put IPv6 addresses in brackets" : ""
                throw ConfigurationError(.listen, "\(ConfigurationError.quote(text)) is not host:port \(example)\(hint)")
            }
            hostPart = parts[0]
            portPart = parts[1]
        }
        guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = UInt16(portPart)
        else {
            throw ConfigurationError(.listen, "port \(ConfigurationError.quote(String(portPart))) is not a number in 0...65535")
        }

        let host: String
        if hostPart.lowercased() == "localhost" {
            host = "127.0.0.1"
        } else if let address = IPAddressLiteral(String(hostPart)), address.isIPv6 == text.hasPrefix("[") {
            host = address.text
        } else {
            throw ConfigurationError(.listen, "host \(ConfigurationError.quote(String(hostPart))) must be an IP address or localhost")
        }
        return ListenAddress(host: host, port: port)
    }
}
