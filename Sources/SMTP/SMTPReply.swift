/// One SMTP reply (RFC 5321 §4.2): its three-digit code and the text of each of its lines,
/// without the code and the separator after it. An enhanced status code (RFC 3463, `5.1.1`)
/// stays at the start of the text, as the server wrote it.
public struct SMTPReply: Sendable, Equatable {
    /// 200–599.
    public let code: Int
    /// One element per line, in order; at least one (possibly empty).
    public let lines: [String]

    public init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines.isEmpty ? [""] : lines
    }

    /// 2yz: the command was accepted.
    public var isPositiveCompletion: Bool { (200..<300).contains(code) }
    /// 3yz: go on (the data after `DATA`, the next `AUTH` step).
    public var isPositiveIntermediate: Bool { (300..<400).contains(code) }
    /// 4yz: refused this time; the same command may succeed later.
    public var isTransientNegative: Bool { (400..<500).contains(code) }
    /// 5yz: refused; the same command will be refused again.
    public var isPermanentNegative: Bool { (500..<600).contains(code) }

    /// The lines joined by spaces, for messages.
    public var text: String { lines.joined(separator: " ") }
}
