/// Reads SMTP replies from the bytes a server sends (RFC 5321 §4.2): `250-first`, `250-more`,
/// `250 last`, every line of one reply with the same code, each ended by CRLF (a bare LF is
/// taken too). Pure and incremental: `append` what arrives, then `next()` until it says nil.
///
/// Bounded: a line longer than `maxLineBytes` or a reply of more than `maxLines` lines is a
/// failure, so a hostile server cannot make the client buffer without end. After a failure the
/// parser stays failed: the connection's framing is lost.
public struct SMTPReplyParser: Sendable {
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// A line (without its line end) longer than `maxLineBytes`.
        case lineTooLong
        /// A reply of more than `maxLines` lines.
        case tooManyLines
        /// Not three digits (the first 2–5) followed by a space, a hyphen or the line end.
        case malformedLine
        /// A line of a multi-line reply with another code than the first.
        case codeChanged

        public var description: String {
            switch self {
            case .lineTooLong: "a reply line is too long"
            case .tooManyLines: "a reply has too many lines"
            case .malformedLine: "a reply line does not start with a reply code"
            case .codeChanged: "the lines of a reply carry different codes"
            }
        }
    }

    /// RFC 5321 §4.5.3.1.5 allows 512 octets with the line end; servers write longer texts,
    /// so the default is four times that.
    public static let defaultMaxLineBytes = 2048
    /// An `EHLO` answer lists a few dozen extensions at most.
    public static let defaultMaxLines = 128

    public let maxLineBytes: Int
    public let maxLines: Int

    private var buffer: [UInt8] = []
    /// Bytes of `buffer` already read as lines.
    private var consumed = 0
    private var pendingCode: Int?
    private var pendingLines: [String] = []
    private var failure: Failure?

    public init(maxLineBytes: Int = defaultMaxLineBytes, maxLines: Int = defaultMaxLines) {
        self.maxLineBytes = max(4, maxLineBytes)
        self.maxLines = max(1, maxLines)
    }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received and not yet read as a line: an unfinished line.
    public var unreadByteCount: Int { buffer.count - consumed }

    /// Nothing received beyond the replies returned: no unfinished line, no unfinished
    /// multi-line reply. After `STARTTLS`'s 220 this must hold: bytes sent before the
    /// handshake must never be read as if they had come over TLS (RFC 3207 §6, the
    /// command-injection attack of CVE-2011-0411).
    public var isBetweenReplies: Bool { buffer.count == consumed && pendingCode == nil }

    /// The next whole reply, nil until one has arrived.
    public mutating func next() throws(Failure) -> SMTPReply? {
        if let failure { throw failure }
        do throws(Failure) {
            return try parseNext()
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func parseNext() throws(Failure) -> SMTPReply? {
        while true {
            guard let lineFeed = buffer[consumed...].firstIndex(of: UInt8(ascii: "\n")) else {
                // An unfinished line may hold a CR that is not yet followed by its LF.
                if buffer.count - consumed > maxLineBytes + 1 { throw .lineTooLong }
                compact()
                return nil
            }
            var end = lineFeed
            if end > consumed, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let line = buffer[consumed..<end]
            consumed = lineFeed + 1
            guard line.count <= maxLineBytes else { throw .lineTooLong }
            let (code, isLast, text) = try Self.parseLine(line)
            if let pendingCode, pendingCode != code { throw .codeChanged }
            guard pendingLines.count < maxLines else { throw .tooManyLines }
            pendingCode = code
            pendingLines.append(text)
            if isLast {
                let reply = SMTPReply(code: code, lines: pendingLines)
                pendingCode = nil
                pendingLines = []
                compact()
                return reply
            }
        }
    }

    private static func parseLine(_ line: ArraySlice<UInt8>) throws(Failure) -> (code: Int, isLast: Bool, text: String) {
        guard line.count >= 3 else { throw .malformedLine }
        let first = line[line.startIndex], second = line[line.startIndex + 1], third = line[line.startIndex + 2]
        guard (UInt8(ascii: "2")...UInt8(ascii: "5")).contains(first), isDigit(second), isDigit(third) else { throw .malformedLine }
        let code = Int(first - UInt8(ascii: "0")) * 100 + Int(second - UInt8(ascii: "0")) * 10 + Int(third - UInt8(ascii: "0"))
        guard line.count > 3 else { return (code, true, "") }
        let separator = line[line.startIndex + 3]
        guard separator == UInt8(ascii: " ") || separator == UInt8(ascii: "-") else { throw .malformedLine }
        // Invalid UTF-8 becomes U+FFFD: the text is only ever shown, never interpreted byte-wise.
        let text = String(decoding: line[(line.startIndex + 4)...], as: UTF8.self)
        return (code, separator == UInt8(ascii: " "), text)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Drops what has been read, once it is most of the buffer.
    private mutating func compact() {
        if consumed > 0, consumed * 2 >= buffer.count {
            buffer.removeFirst(consumed)
            consumed = 0
        }
    }
}
