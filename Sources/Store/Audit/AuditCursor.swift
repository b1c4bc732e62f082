import WireFormat

/// A place in the audit trail's order (newest first: time, then insertion order), handed to
/// clients as an opaque string; a page lists the events strictly after it.
public struct AuditCursor: Sendable, Equatable {
    public let at: Int64
    public let seq: Int64

    public init(at: Int64, seq: Int64) {
        self.at = at
        self.seq = seq
    }

    /// base64url of `at.seq`.
    public var encoded: String { Base64.url.encode(Array("\(at).\(seq)".utf8)) }

    /// nil for anything `encoded` did not write.
    public init?(encoded text: String) {
        guard text.utf8.count <= 64, let bytes = Base64.url.decode(text), let plain = String(validating: bytes, as: UTF8.self)
        else { return nil }
        let parts = plain.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let at = Int64(parts[0]), let seq = Int64(parts[1]), seq > 0,
              "\(at).\(seq)" == plain
        else { return nil }
        self.init(at: at, seq: seq)
    }
}
