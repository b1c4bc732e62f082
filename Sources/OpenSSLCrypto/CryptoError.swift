import COpenSSL

/// A failed cryptographic operation: what was attempted and OpenSSL's reason, never key
/// material or the data being processed.
public struct CryptoError: Error, CustomStringConvertible, Sendable, Equatable {
    public let operation: String
    public let reason: String

    public init(_ operation: String, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    /// Takes (and clears) OpenSSL's error queue for this thread, so one failure's reasons never
    /// leak into the next operation's report.
    static func openSSL(_ operation: String) -> CryptoError {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if let text = ERR_reason_error_string(code) {
                reasons.append(String(decoding: UnsafeRawBufferPointer(start: text, count: strlen(text)), as: UTF8.self))
            } else {
                reasons.append("error \(code)")
            }
        }
        return CryptoError(operation, reason: reasons.isEmpty ? "failed" : reasons.joined(separator: "; "))
    }

    public var description: String { "\(operation): \(reason)" }
}
