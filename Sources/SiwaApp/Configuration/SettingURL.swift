import Accounts
/// An absolute `http`/`https` URL taken apart just enough to validate settings and derive origins.
///
/// Hand-written rather than `URLComponents` so that what is accepted does not differ between
/// Foundation on Linux and on macOS, and so that IPv6 hosts keep their brackets.
struct SettingURL: Equatable, Sendable {
    /// Lower-cased `http` or `https`.
    let scheme: String
    /// Lower-cased; IPv6 literals keep their brackets (`[::1]`).
    let host: String
    let port: UInt16?
    /// As written, possibly empty.
    let path: String
    let query: String?
    let fragment: String?

    /// Why a text is not an acceptable URL, as the end of an error message.
    enum Problem: Error {
        case notAbsolute
        case scheme(String)
        case userInfo
        case host(String)
        case port(String)
        case characters

        var message: String {
            switch self {
            case .notAbsolute: "is not an absolute URL (e.g. https://example.com)"
            case .scheme(let scheme): "must use http or https, not \(ConfigurationError.quote(scheme))"
            case .userInfo: "must not contain a user name or password"
            case .host(let host): "has an invalid host \(ConfigurationError.quote(host))"
            case .port(let port): "has an invalid port \(ConfigurationError.quote(port))"
            case .characters: "contains spaces or control characters"
            }
        }
    }

    static func parse(_ text: String) throws(Problem) -> SettingURL {
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw .characters
        }
        guard let separator = text.firstRange(of: "://") else { throw .notAbsolute }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            if scheme.isEmpty { throw .notAbsolute }
            throw .scheme(scheme)
        }
        let rest = text[separator.upperBound...]
        let authorityEnd = rest.firstIndex(where: { (character: Character) -> Bool in character == "/" || character == "?" || character == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var remainder = rest[authorityEnd...]
        guard !authority.contains("@") else { throw .userInfo }

        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .host(String(authority)) }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .host(String(authority)) }
                portText = after.dropFirst()
            }
            guard let literal = IPAddressLiteral(String(host.dropFirst().dropLast())), literal.isIPv6 else {
                throw .host(String(host))
            }
        } else {
            let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { throw .host(String(authority)) }
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            let allowed = host.unicodeScalars.allSatisfy { scalar in
                ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                    || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "." || scalar == "_"
            }
            guard !host.isEmpty, allowed, !host.hasPrefix("."), !host.hasPrefix("-") else {
                if host.isEmpty { throw .notAbsolute }
                throw .host(String(host))
            }
        }

        var port: UInt16?
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = UInt16(portText), value != 0
            else { throw .port(String(portText)) }
            port = value
        }

        var fragment: String?
        if let hash = remainder.firstIndex(of: "#") {
            fragment = String(remainder[remainder.index(after: hash)...])
            remainder = remainder[..<hash]
        }
        var query: String?
        if let question = remainder.firstIndex(of: "?") {
            query = String(remainder[remainder.index(after: question)...])
            remainder = remainder[..<question]
        }
        return SettingURL(
            scheme: scheme, host: host.lowercased(), port: port,
            path: String(remainder), query: query, fragment: fragment
        )
    }

    /// `scheme://host[:port]`, lower-cased, without the scheme's default port: the form browsers
    /// send in `Origin`, so origins compare as plain strings.
    var origin: String {
        let defaultPort: UInt16 = scheme == "https" ? 443 : 80
        if let port, port != defaultPort { return "\(scheme)://\(host):\(port)" }
        return "\(scheme)://\(host)"
    }

    /// `localhost`, `127.0.0.0/8` or `[::1]`.
    var isLoopback: Bool {
        if host == "localhost" { return true }
        let literal = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return IPAddressLiteral(literal)?.isLoopback ?? false
    }
}
