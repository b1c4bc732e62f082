import WireFormat

/// Parses one HTTP/1.1 response from bytes as they arrive: the head, then a body framed by
/// `Content-Length`, chunking (extensions and trailers skipped), or the end of the connection.
/// Pure: the connection only feeds it bytes.
struct ResponseDecoder {
    struct Head {
        var minorVersion: Int
        var status: Int
        var headers: [(String, String)]
    }

    enum Framing: Equatable {
        case none
        case length(Int)
        case chunked
        case untilClose
    }

    private enum State {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case complete
    }

    static let maxHeadBytes = 64 * 1024
    static let maxHeaderCount = 200
    static let maxChunkLineBytes = 4 * 1024

    let maxBodyBytes: Int
    /// A response to HEAD has no body, whatever its headers say.
    let isHeadRequest: Bool

    private(set) var head: Head?
    private(set) var framing: Framing = .none
    private(set) var body: [UInt8] = []
    /// Any byte at all arrived (so a failure is no longer "closed before a response").
    private(set) var receivedAnyByte = false
    /// Bytes arrived after the response ended: the connection is out of step and unusable.
    private(set) var hasExtraBytes = false

    private var state = State.head
    private var buffer: [UInt8] = []
    private var position = 0
    /// Where the search for the end of the head resumes, so a slow head is not rescanned.
    private var headScanFrom = 0
    private var trailerBytes = 0

    init(maxBodyBytes: Int, isHeadRequest: Bool) {
        self.maxBodyBytes = maxBodyBytes
        self.isHeadRequest = isHeadRequest
    }

    var isComplete: Bool {
        if case .complete = state { return true }
        return false
    }

    /// Whether the connection may carry another request once this response is complete.
    var allowsReuse: Bool {
        guard isComplete, !hasExtraBytes, let head, head.minorVersion >= 1, framing != .untilClose else { return false }
        let connection = head.headers.filter { ASCII.equalsIgnoringCase($0.0, "connection") }.map(\.1).joined(separator: ",")
        return !connection.split(separator: ",").contains { ASCII.equalsIgnoringCase(String($0.trimmingHTTPWhitespace()), "close") }
    }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(HTTPClientError) {
        guard !bytes.isEmpty else { return }
        receivedAnyByte = true
        if isComplete {
            hasExtraBytes = true
            return
        }
        buffer.append(contentsOf: bytes)
        try process()
        if isComplete, position < buffer.count { hasExtraBytes = true }
        // Drop what has been consumed, now and then, so the buffer does not grow with the body.
        if position > 0, position == buffer.count || position >= 64 * 1024 {
            buffer.removeFirst(position)
            headScanFrom = max(0, headScanFrom - position)
            position = 0
        }
    }

    /// The connection reached end of input: completes a close-delimited body, else the
    /// response was cut short.
    mutating func finish() throws(HTTPClientError) {
        switch state {
        case .complete:
            return
        case .untilClose:
            state = .complete
        case .head:
            throw .malformedResponse("connection closed inside the response head")
        case .fixed(let remaining):
            throw .malformedResponse("connection closed with \(remaining) body bytes still to come")
        default:
            throw .malformedResponse("connection closed inside a chunked body")
        }
    }

    // MARK: States

    private mutating func process() throws(HTTPClientError) {
        while position < buffer.count {
            switch state {
            case .head:
                guard try parseHead() else { return }
            case .fixed(let remaining):
                let count = min(remaining, buffer.count - position)
                try appendBody(count)
                state = remaining == count ? .complete : .fixed(remaining: remaining - count)
            case .chunkSize:
                guard let line = try nextLine(limit: Self.maxChunkLineBytes, what: "chunk size line") else { return }
                let size = try Self.chunkSize(line)
                if size == 0 {
                    state = .trailers
                } else {
                    guard size <= maxBodyBytes - body.count else { throw .responseTooLarge }
                    state = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                let count = min(remaining, buffer.count - position)
                try appendBody(count)
                state = remaining == count ? .chunkDataEnd : .chunkData(remaining: remaining - count)
            case .chunkDataEnd:
                guard let line = try nextLine(limit: 2, what: "chunk end") else { return }
                guard line.isEmpty else { throw .malformedResponse("chunk data longer than its size") }
                state = .chunkSize
            case .trailers:
                let before = position
                guard let line = try nextLine(limit: Self.maxHeadBytes, what: "trailer") else { return }
                trailerBytes += position - before
                guard trailerBytes <= Self.maxHeadBytes else { throw .malformedResponse("trailers over 64 KiB") }
                if line.isEmpty { state = .complete }
            case .untilClose:
                try appendBody(buffer.count - position)
            case .complete:
                return
            }
        }
    }

    private mutating func appendBody(_ count: Int) throws(HTTPClientError) {
        guard count <= maxBodyBytes - body.count else { throw .responseTooLarge }
        body.append(contentsOf: buffer[position..<(position + count)])
        position += count
    }

    /// The next line without its CRLF (a bare LF is accepted), or nil until one has arrived.
    private mutating func nextLine(limit: Int, what: String) throws(HTTPClientError) -> ArraySlice<UInt8>? {
        let searchEnd = min(buffer.count, position + limit + 2)
        guard let newline = buffer[position..<searchEnd].firstIndex(of: 0x0A) else {
            if searchEnd - position >= limit + 2 { throw .malformedResponse("\(what) too long") }
            return nil
        }
        var end = newline
        if end > position, buffer[end - 1] == 0x0D { end -= 1 }
        let line = buffer[position..<end]
        position = newline + 1
        return line
    }

    private static func chunkSize(_ line: ArraySlice<UInt8>) throws(HTTPClientError) -> Int {
        do {
            return try ChunkSize.parse(line)
        } catch {
            switch error {
            case .malformed: throw .malformedResponse("bad chunk size")
            case .tooLarge: throw .responseTooLarge
            case .controlCharacterInExtension: throw .malformedResponse("control character in chunk extension")
            }
        }
    }

    // MARK: Head

    /// Parses the head once all of it has arrived; false while waiting for more.
    private mutating func parseHead() throws(HTTPClientError) -> Bool {
        guard let (headEnd, next) = findHeadEnd() else {
            if buffer.count - position > Self.maxHeadBytes { throw .malformedResponse("response head over 64 KiB") }
            return false
        }
        guard headEnd - position <= Self.maxHeadBytes else { throw .malformedResponse("response head over 64 KiB") }
        let parsed = try Self.parseHeadLines(buffer[position..<headEnd])
        position = next
        headScanFrom = next
        // 1xx answers are interim (we never send Expect, but a server may still say 100 or 103).
        if parsed.status >= 100, parsed.status < 200 {
            guard parsed.status != 101 else { throw .malformedResponse("unexpected protocol switch") }
            return true
        }
        head = parsed
        framing = try framing(for: parsed)
        switch framing {
        case .none, .length(0): state = .complete
        case .length(let count): state = .fixed(remaining: count)
        case .chunked: state = .chunkSize
        case .untilClose: state = .untilClose
        }
        return true
    }

    /// The index where the head's last line ends and the index after the blank line.
    private mutating func findHeadEnd() -> (Int, Int)? {
        var index = max(position, headScanFrom)
        while index < buffer.count {
            if buffer[index] == 0x0A {
                // LF LF or LF CR LF ends the head.
                if index + 1 < buffer.count, buffer[index + 1] == 0x0A { return (index, index + 2) }
                if index + 2 < buffer.count, buffer[index + 1] == 0x0D, buffer[index + 2] == 0x0A { return (index, index + 3) }
                if index + 2 >= buffer.count {
                    headScanFrom = index
                    return nil
                }
            }
            index += 1
        }
        headScanFrom = index
        return nil
    }

    private static func parseHeadLines(_ bytes: ArraySlice<UInt8>) throws(HTTPClientError) -> Head {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        guard !lines.isEmpty else { throw .malformedResponse("empty status line") }
        let statusLine = lines.removeFirst()
        // HTTP/1.x SP 3DIGIT [SP reason]
        let prefix = Array("HTTP/1.".utf8)
        guard statusLine.count >= 12, statusLine.prefix(7).elementsEqual(prefix) else { throw .malformedResponse("bad status line") }
        let start = statusLine.startIndex
        let minor = statusLine[start + 7]
        guard minor == UInt8(ascii: "0") || minor == UInt8(ascii: "1"), statusLine[start + 8] == 0x20 else {
            throw .malformedResponse("bad status line")
        }
        let code = statusLine[(start + 9)..<(start + 12)]
        guard code.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), statusLine.count == 12 || statusLine[start + 12] == 0x20 else {
            throw .malformedResponse("bad status line")
        }
        let status = code.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard status >= 100 else { throw .malformedResponse("bad status line") }

        guard lines.count <= maxHeaderCount else { throw .malformedResponse("more than \(maxHeaderCount) header fields") }
        var headers: [(String, String)] = []
        headers.reserveCapacity(lines.count)
        for line in lines {
            // Folded lines (obsolete) and lines without a colon are refused, as RFC 9112 §5.2 allows.
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                line[line.startIndex..<colon].allSatisfy(RequestEncoder.isTokenByte)
            else { throw .malformedResponse("bad header line") }
            let value = line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
            let trimmed = value.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            headers.append((String(decoding: line[line.startIndex..<colon], as: UTF8.self), String(decoding: trimmed, as: UTF8.self)))
        }
        return Head(minorVersion: Int(minor - 0x30), status: status, headers: headers)
    }

    /// RFC 9112 §6.3, for responses.
    private func framing(for head: Head) throws(HTTPClientError) -> Framing {
        if isHeadRequest || head.status == 204 || head.status == 304 { return .none }
        let transferEncodings = head.headers.filter { ASCII.equalsIgnoringCase($0.0, "transfer-encoding") }.map(\.1)
        if !transferEncodings.isEmpty {
            let codings = transferEncodings.joined(separator: ",").split(separator: ",").map { String($0.trimmingHTTPWhitespace()) }
            // Chunked last: chunked framing. Otherwise the body runs to the close.
            if let last = codings.last, ASCII.equalsIgnoringCase(last, "chunked") { return .chunked }
            return .untilClose
        }
        let lengths = head.headers.filter { ASCII.equalsIgnoringCase($0.0, "content-length") }
            .flatMap { $0.1.split(separator: ",").map { String($0.trimmingHTTPWhitespace()) } }
        if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.utf8.count <= 18,
                first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(first)
            else { throw .malformedResponse("bad Content-Length") }
            guard length <= maxBodyBytes else { throw .responseTooLarge }
            return .length(length)
        }
        return .untilClose
    }
}
