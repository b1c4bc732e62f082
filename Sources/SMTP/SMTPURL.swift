import Glibc
import TLS
import WireFormat

/// Where and how to reach the SMTP server: `smtp://[user:password@]host[:port]` (port 587,
/// STARTTLS required; plain SMTP only to a loopback host) or `smtps://…` (TLS from the first
/// byte, port 465). The user name and password are percent-decoded, so `@`, `:` and `/` in a
/// password are written `%40`, `%3A`, `%2F`.
///
/// Neither `description` nor an error shows the password, nor any part of the text that might
/// be one: a problem names what is wrong, not the characters.
public struct SMTPURL: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public enum Security: String, Sendable {
        /// `smtp://`: plain TCP, then `STARTTLS` (RFC 3207).
        case startTLS = "smtp"
        /// `smtps://`: TLS from the first byte (RFC 8314 §3.3).
        case implicitTLS = "smtps"

        public var defaultPort: UInt16 { self == .startTLS ? 587 : 465 }
    }

    /// Why a text is not an acceptable `smtp_url`, as the end of an error message.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case scheme
        case characters
        case host
        case port
        case userInfo
        case path

        public var description: String {
            switch self {
            case .scheme: "must start with smtp:// or smtps://"
            case .characters: "contains spaces, control characters or non-ASCII characters (percent-encode them)"
            case .host: "has no valid host"
            case .port: "has an invalid port (1-65535)"
            case .userInfo: "has invalid user info: write user:password@, both percent-encoded, neither empty"
            case .path: "must not have a path, query or fragment"
            }
        }
    }

    public let security: Security
    /// Lower-cased; an IPv6 literal without its brackets.
    public let host: String
    public let port: UInt16
    public let credentials: SMTPCredentials?

    public init(_ text: String) throws(Problem) {
        let bytes = Array(text.utf8)
        // Scheme first, so any text that is not an SMTP URL at all gets that answer.
        let rest: ArraySlice<UInt8>
        if Self.hasPrefix(bytes, "smtps://") {
            security = .implicitTLS
            rest = bytes[8...]
        } else if Self.hasPrefix(bytes, "smtp://") {
            security = .startTLS
            rest = bytes[7...]
        } else {
            throw .scheme
        }
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .characters }

        var authority = rest
        if let end = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            // A trailing `/` alone is harmless; anything more means the URL says something
            // this client would ignore.
            guard rest[end...].elementsEqual([UInt8(ascii: "/")]) else {
                // An `@` after the cut means a password with a raw `/`, `?` or `#`: say the user
                // info is wrong (its characters are never echoed), not the path.
                let cutsUserInfo = !rest[..<end].contains(UInt8(ascii: "@")) && rest[end...].contains(UInt8(ascii: "@"))
                throw cutsUserInfo ? .userInfo : .path
            }
            authority = rest[..<end]
        }

        // The last `@` ends the user info: an unencoded `@` in a password still parses.
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            credentials = try Self.credentials(authority[..<at])
            authority = authority[(at + 1)...]
        } else {
            credentials = nil
        }

        let hostPart: ArraySlice<UInt8>
        let portPart: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { throw .host }
            hostPart = authority[(authority.startIndex + 1)..<close]
            let after = authority[(close + 1)...]
            if after.isEmpty {
                portPart = nil
            } else {
                guard after.first == UInt8(ascii: ":") else { throw .host }
                portPart = after.dropFirst()
            }
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(decoding: hostPart, as: UTF8.self), &address) == 1 else { throw .host }
        } else {
            if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
                hostPart = authority[..<colon]
                portPart = authority[(colon + 1)...]
            } else {
                hostPart = authority
                portPart = nil
            }
            guard Self.isHostName(hostPart) else { throw .host }
        }
        host = String(decoding: hostPart, as: UTF8.self).lowercased()

        if let portPart {
            guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let number = Int(String(decoding: portPart, as: UTF8.self)), (1...65_535).contains(number)
            else { throw .port }
            port = UInt16(number)
        } else {
            port = security.defaultPort
        }
    }

    /// `localhost`, `127.0.0.0/8` or `::1`: the only hosts plain SMTP may go to.
    public var isLoopback: Bool { AddressFamily.isLoopback(host: host) }

    /// The URL with the password masked, for logs, `check-config` and errors.
    public var redacted: String {
        let userInfo = credentials.map { "\(FormURLEncoding.escape($0.user)):***@" } ?? ""
        let hostText = host.contains(":") ? "[\(host)]" : host
        return "\(security.rawValue)://\(userInfo)\(hostText):\(port)"
    }

    public var description: String { redacted }
    public var debugDescription: String { redacted }
    public var customMirror: Mirror { Mirror(self, children: ["url": redacted]) }

    private static func credentials(_ userInfo: ArraySlice<UInt8>) throws(Problem) -> SMTPCredentials {
        guard let colon = userInfo.firstIndex(of: UInt8(ascii: ":")),
            let user = PercentDecoding.decode(userInfo[..<colon]),
            let password = PercentDecoding.decode(userInfo[(colon + 1)...]),
            !user.isEmpty, !password.isEmpty,
            // AUTH PLAIN separates the user and the password with NUL (RFC 4616 §2).
            !user.utf8.contains(0), !password.utf8.contains(0)
        else { throw .userInfo }
        return SMTPCredentials(user: user, password: password)
    }

    private static func hasPrefix(_ bytes: [UInt8], _ prefix: String) -> Bool {
        let prefix = Array(prefix.utf8)
        return bytes.count >= prefix.count && zip(bytes, prefix).allSatisfy { ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) == $1 }
    }

    /// A DNS name (letters, digits, `-`, `_`, dots between labels) or an IPv4 literal.
    private static func isHostName(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                && label.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                        UInt8(ascii: "-"), UInt8(ascii: "_"):
                        true
                    default: false
                    }
                }
        }
    }
}
