import COpenSSL
import Glibc

/// A TLS failure: what was attempted and OpenSSL's (or the system's) reason. Never key
/// material, never application data.
public enum TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Building a context or certificate: loading CAs, certificates, keys.
    case setup(String)
    /// The handshake failed; the reason includes certificate verification's verdict.
    case handshake(String)
    /// The deadline passed while waiting for the socket.
    case timedOut
    /// The peer closed or reset the connection where more was expected.
    case closed
    /// A TLS protocol or system error on an established connection.
    case failed(String)

    public var description: String {
        switch self {
        case .setup(let reason): "TLS setup failed: \(reason)"
        case .handshake(let reason): "TLS handshake failed: \(reason)"
        case .timedOut: "TLS timed out"
        case .closed: "TLS connection closed by the peer"
        case .failed(let reason): "TLS failed: \(reason)"
        }
    }

    /// Takes (and clears) this thread's OpenSSL error queue, so one failure's reasons never
    /// leak into the next operation's report.
    static func drainReasons() -> String? {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if let text = ERR_reason_error_string(code) {
                reasons.append(String(cString: text))
            } else {
                reasons.append("error \(code)")
            }
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    static func openSSL(_ operation: String) -> TLSError {
        .setup("\(operation): \(drainReasons() ?? "failed")")
    }

    static func systemReason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
