import WireFormat

/// An incremental HTTP/1.1 request parser (RFC 9112). Bytes are appended as they arrive, in
/// pieces of any size; `next()` hands out each request once it is complete.
///
/// It is strict where leniency has let attacks through elsewhere: bare LF, obsolete line
/// folding, whitespace before the colon, both `Content-Length` and `Transfer-Encoding`, and
/// codings other than `chunked` are errors, never guesses.
///
/// Pure Swift with no Foundation, so it can be compiled into the fuzzer with only WireFormat.
public struct RequestParser {
    public enum Event {
        /// The head is complete and a body is still to come: the moment to answer
        /// `Expect: 100-continue`. Reported at most once per request.
        case head(HTTPRequestHead)
        /// A whole request.
        case request(HTTPRequestHead, body: [UInt8])
    }

    private enum State {
        case head
        case fixedBody(HTTPRequestHead, length: Int)
        case chunked(HTTPRequestHead, ChunkStep)
    }

    private enum ChunkStep {
        case sizeLine
        case data(remaining: Int)
        case dataEnd
        case trailers(fields: Int, bytes: Int)
    }

    public let limits: HTTPLimits
    private var buffer: [UInt8] = []
    /// Index in `buffer` of the first byte not yet consumed.
    private var start = 0
    /// Head scanning resumes here, so feeding a head byte by byte stays linear.
    private var scanFrom = 0
    private var lineCount = 0
    private var state = State.head
    private var headReported = false
    /// The body of the request being received, moved out of `buffer` as it arrives.
    private var body = BodyBuffer()

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compactIfWorthIt()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        compactIfWorthIt()
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received and not yet handed out as part of a request.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Bytes of the request being received that the parser holds: buffered input plus the body
    /// received so far. How far a body got.
    public var heldByteCount: Int { bufferedByteCount + body.count }

    /// Memory the parser holds: the allocated capacity of its input buffer and of the body being
    /// received (what arrived, and one piece more at most), which is what the server's body
    /// budget is charged.
    public var heldCapacity: Int { buffer.capacity + body.capacity }

    /// True once any byte of the next request has arrived (leading blank lines aside).
    public var hasPartialRequest: Bool {
        if case .head = state {
            var index = start
            while index + 1 < buffer.count, buffer[index] == 0x0D, buffer[index + 1] == 0x0A { index += 2 }
            return index < buffer.count
        }
        return true
    }

    /// True while the head is complete and the body is being received.
    public var isReceivingBody: Bool {
        if case .head = state { return false }
        return true
    }

    /// Releases buffer memory while the connection is idle (10,000 idle connections must stay
    /// small).
    public mutating func shrinkIfEmpty() {
        if start == buffer.count, case .head = state {
            buffer = []
            start = 0
            scanFrom = 0
        }
    }

    /// Drops everything received, giving the memory back: for a connection that will read no
    /// further request.
    public mutating func discardAll() {
        self = RequestParser(limits: limits)
    }

    /// The next event, or nil when more bytes are needed.
    public mutating func next() throws(HTTPParseError) -> Event? {
        switch state {
        case .head:
            guard let head = try parseHead() else { return nil }
            switch head.framing {
            case .none:
                finishRequest()
                return .request(head, body: [])
            case .length(let length):
                state = .fixedBody(head, length: length)
            case .chunked:
                state = .chunked(head, .sizeLine)
            }
            headReported = false
            return try next()
        case .fixedBody(let head, let length):
            let available = min(length - body.count, buffer.count - start)
            if available > 0 { moveToBody(available, atMost: length) }
            releaseBufferIfConsumed()
            if body.count == length {
                finishRequest()
                return .request(head, body: body.take())
            }
            return reportHeadOnce(head)
        case .chunked(let head, var step):
            let done = try decodeChunks(&step)
            releaseBufferIfConsumed()
            if done {
                finishRequest()
                return .request(head, body: body.take())
            }
            state = .chunked(head, step)
            return reportHeadOnce(head)
        }
    }

    private mutating func reportHeadOnce(_ head: HTTPRequestHead) -> Event? {
        if headReported { return nil }
        headReported = true
        return .head(head)
    }

    /// Moves the next `count` buffered bytes to the body, whose whole is at most `limit`.
    private mutating func moveToBody(_ count: Int, atMost limit: Int) {
        body.append(buffer[start..<start + count], limit: limit)
        start += count
    }

    /// While a body arrives, an input buffer emptied into it is let go: kept, it would be held
    /// beside the body for as long as the body takes to arrive.
    private mutating func releaseBufferIfConsumed() {
        if start == buffer.count {
            buffer = []
            start = 0
            scanFrom = 0
        }
    }

    private mutating func finishRequest() {
        state = .head
        scanFrom = start
        lineCount = 0
        headReported = false
    }

    private mutating func compactIfWorthIt() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
            scanFrom = 0
        } else if start >= 16 * 1024 {
            buffer.removeSubrange(0..<start)
            scanFrom -= start
            start = 0
        }
    }

    // MARK: - Head

    private mutating func parseHead() throws(HTTPParseError) -> HTTPRequestHead? {
        // RFC 9112 §2.2: ignore empty lines received before the request line.
        if lineCount == 0 {
            while start + 1 < buffer.count, buffer[start] == 0x0D, buffer[start + 1] == 0x0A {
                start += 2
            }
            if start < buffer.count, buffer[start] == 0x0A { throw .bad("bare LF line ending") }
            scanFrom = max(scanFrom, start)
        }
        var scan = HeadScan(start: start, scanFrom: scanFrom, lineCount: lineCount)
        let limits = self.limits
        let headEnd = try buffer.withUnsafeBufferPointer { bytes throws(HTTPParseError) in
            try scan.findEnd(in: bytes, limits: limits)
        }
        scanFrom = scan.scanFrom
        lineCount = scan.lineCount
        guard let headEnd else { return nil }
        let headStart = start
        let head = try buffer.withUnsafeBufferPointer { bytes throws(HTTPParseError) in
            try Self.interpretHead(UnsafeBufferPointer(rebasing: bytes[headStart..<headEnd]), limits: limits)
        }
        start = headEnd
        return head
    }

    /// Reads the request line and fields of a complete head (ending in CRLF CRLF).
    static func interpretHead(_ head: UnsafeBufferPointer<UInt8>, limits: HTTPLimits) throws(HTTPParseError) -> HTTPRequestHead {
        var lines = LineCursor(bytes: head)
        guard let requestLine = lines.nextLine() else { throw .bad("empty request") }
        let (method, target, version) = try parseRequestLine(requestLine)
        // Room for a usual request's fields at once, instead of growing one, two, four, eight.
        var headers = HTTPHeaders(capacity: 8)
        while let line = lines.nextLine(), !line.isEmpty {
            let (name, value) = try parseField(line)
            headers.add(name, value)
        }
        if headers.count > limits.maxHeaderFields {
            throw HTTPParseError(.headersTooLarge, "more than \(limits.maxHeaderFields) header fields")
        }
        return try interpretFields(method: method, target: target, version: version, headers: headers, limits: limits)
    }

    private static func parseRequestLine(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> (HTTPMethod, String, HTTPVersion) {
        guard let firstSpace = line.firstIndex(of: 0x20) else { throw .bad("malformed request line") }
        let afterMethod = firstSpace + 1
        guard let secondSpaceOffset = UnsafeBufferPointer(rebasing: line[afterMethod...]).firstIndex(of: 0x20) else {
            throw .bad("malformed request line")
        }
        let secondSpace = afterMethod + secondSpaceOffset
        let methodBytes = UnsafeBufferPointer(rebasing: line[..<firstSpace])
        let targetBytes = UnsafeBufferPointer(rebasing: line[afterMethod..<secondSpace])
        let versionBytes = UnsafeBufferPointer(rebasing: line[(secondSpace + 1)...])

        guard !methodBytes.isEmpty, methodBytes.count <= 32, methodBytes.allSatisfy(isTokenByte) else {
            throw .bad("malformed method")
        }
        guard !targetBytes.isEmpty, targetBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .bad("malformed request target")
        }
        let version: HTTPVersion
        if versionBytes.elementsEqual("HTTP/1.1".utf8) {
            version = .http1_1
        } else if versionBytes.elementsEqual("HTTP/1.0".utf8) {
            version = .http1_0
        } else {
            throw .bad("unsupported HTTP version")
        }
        let method = HTTPMethod.intern(methodBytes)
        return (method, String(decoding: targetBytes, as: UTF8.self), version)
    }

    private static func parseField(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> (String, String) {
        guard let first = line.first else { throw .bad("malformed header field") }
        if first == 0x20 || first == 0x09 { throw .bad("obsolete line folding") }
        guard let colon = line.firstIndex(of: 0x3A), colon > 0 else { throw .bad("malformed header field") }
        let nameBytes = UnsafeBufferPointer(rebasing: line[..<colon])
        // Whitespace between name and colon is a smuggling vector (RFC 9112 §5.1).
        guard nameBytes.allSatisfy(isTokenByte) else { throw .bad("malformed header field name") }
        var valueStart = colon + 1
        var valueEnd = line.count
        while valueStart < valueEnd, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
        while valueEnd > valueStart, line[valueEnd - 1] == 0x20 || line[valueEnd - 1] == 0x09 { valueEnd -= 1 }
        let valueBytes = UnsafeBufferPointer(rebasing: line[valueStart..<valueEnd])
        for byte in valueBytes where byte < 0x20 && byte != 0x09 || byte == 0x7F {
            throw .bad("control character in header field value")
        }
        return (String(decoding: nameBytes, as: UTF8.self), String(decoding: valueBytes, as: UTF8.self))
    }

    private static func interpretFields(
        method: HTTPMethod, target: String, version: HTTPVersion, headers: HTTPHeaders, limits: HTTPLimits
    ) throws(HTTPParseError) -> HTTPRequestHead {
        var hosts = 0
        var contentLength: Int?
        var transferCodings: [String] = []
        var sawTransferEncoding = false
        var connectionClose = false
        var connectionKeepAlive = false
        var expectsContinue = false

        for (name, value) in headers {
            switch name.utf8.count {
            case 4 where HTTPHeaders.equalsIgnoringCase(name, "host"):
                hosts += 1
                guard value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x2F }) else {
                    throw .bad("malformed Host")
                }
            case 14 where HTTPHeaders.equalsIgnoringCase(name, "content-length"):
                guard let length = parseContentLength(value) else { throw .bad("malformed Content-Length") }
                if let contentLength, contentLength != length { throw .bad("conflicting Content-Length") }
                contentLength = length
            case 17 where HTTPHeaders.equalsIgnoringCase(name, "transfer-encoding"):
                sawTransferEncoding = true
                for coding in value.split(separator: ",", omittingEmptySubsequences: false) {
                    transferCodings.append(trimmedLowercase(coding))
                }
            case 10 where HTTPHeaders.equalsIgnoringCase(name, "connection"):
                for option in value.split(separator: ",") {
                    switch trimmedLowercase(option) {
                    case "close": connectionClose = true
                    case "keep-alive": connectionKeepAlive = true
                    default: break
                    }
                }
            case 6 where HTTPHeaders.equalsIgnoringCase(name, "expect"):
                if trimmedLowercase(Substring(value)) == "100-continue" { expectsContinue = true }
            default:
                break
            }
        }

        if version == .http1_1, hosts != 1 { throw .bad(hosts == 0 ? "missing Host" : "more than one Host") }
        if hosts > 1 { throw .bad("more than one Host") }

        let framing: BodyFraming
        if sawTransferEncoding {
            if contentLength != nil { throw .bad("both Content-Length and Transfer-Encoding") }
            if version == .http1_0 { throw .bad("Transfer-Encoding on HTTP/1.0") }
            guard transferCodings == ["chunked"] else { throw .bad("unsupported Transfer-Encoding") }
            framing = .chunked
        } else if let contentLength {
            if contentLength > limits.maxBodyBytes {
                throw HTTPParseError(.payloadTooLarge, "body over \(limits.maxBodyBytes) bytes")
            }
            framing = contentLength == 0 ? .none : .length(contentLength)
        } else {
            framing = .none
        }

        let (path, query) = try splitTarget(target, method: method)
        let keepAlive = version == .http1_1 ? !connectionClose : (connectionKeepAlive && !connectionClose)
        return HTTPRequestHead(
            method: method, target: target, path: path, query: query, version: version, headers: headers,
            keepAlive: keepAlive, expectsContinue: expectsContinue && version == .http1_1 && framing != .none,
            framing: framing)
    }

    /// Origin form (`/path?query`), absolute form (`http://host/path`, which RFC 9112 §3.2.2
    /// says a server must accept), or `*` for OPTIONS.
    private static func splitTarget(_ target: String, method: HTTPMethod) throws(HTTPParseError) -> (String, String?) {
        var originForm = Substring(target)
        if target.hasPrefix("/") {
            if target.hasPrefix("//") { throw .bad("malformed request target") }
        } else if target == "*" {
            guard method == .options else { throw .bad("malformed request target") }
            return ("*", nil)
        } else if let afterScheme = Self.dropHTTPScheme(target) {
            guard let slash = afterScheme.firstIndex(of: "/") else { return ("/", nil) }
            originForm = afterScheme[slash...]
        } else {
            throw .bad("malformed request target")
        }
        // By bytes, not Characters: the target is printable ASCII (`parseRequestLine`), so each
        // byte is a Character, and grapheme breaking cost more than the rest of this function.
        let bytes = originForm.utf8
        if bytes.contains(UInt8(ascii: "#")) { throw .bad("fragment in request target") }
        guard let questionMark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return (String(originForm), nil) }
        return (String(originForm[..<questionMark]), String(originForm[bytes.index(after: questionMark)...]))
    }

    /// The part of an absolute-form target after `http://` or `https://`, or nil.
    private static func dropHTTPScheme(_ target: String) -> Substring? {
        for scheme in ["http://", "https://"] where target.utf8.count > scheme.utf8.count {
            let prefix = target.prefix(scheme.count)
            if prefix.lowercased() == scheme { return target.dropFirst(scheme.count) }
        }
        return nil
    }

    private static func parseContentLength(_ value: String) -> Int? {
        let digits = value.utf8
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private static func trimmedLowercase(_ text: Substring) -> String {
        text.trimmingHTTPWhitespace().lowercased()
    }

    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        tokenTable[Int(byte)]
    }

    /// RFC 9110 §5.6.2 tchar.
    private static let tokenTable: [Bool] = (0..<256).map { byte in
        switch UInt8(byte) {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    // MARK: - Chunked body (RFC 9112 §7.1)

    /// Decodes what has arrived; true when the last chunk and trailers are complete.
    private mutating func decodeChunks(_ step: inout ChunkStep) throws(HTTPParseError) -> Bool {
        while true {
            switch step {
            case .sizeLine:
                guard let line = try takeLine(limit: limits.maxChunkLineBytes, what: "chunk size line") else { return false }
                let size = try Self.parseChunkSize(line)
                if size > limits.maxBodyBytes - body.count {
                    throw HTTPParseError(.payloadTooLarge, "body over \(limits.maxBodyBytes) bytes")
                }
                step = size == 0 ? .trailers(fields: 0, bytes: 0) : .data(remaining: size)
            case .data(let remaining):
                let available = min(remaining, buffer.count - start)
                if available == 0 { return false }
                moveToBody(available, atMost: limits.maxBodyBytes)
                step = remaining == available ? .dataEnd : .data(remaining: remaining - available)
            case .dataEnd:
                guard buffer.count - start >= 2 else { return false }
                guard buffer[start] == 0x0D, buffer[start + 1] == 0x0A else { throw .bad("missing CRLF after chunk data") }
                start += 2
                step = .sizeLine
            case .trailers(let fields, let bytes):
                let lineStart = start
                guard let line = try takeLine(limit: limits.maxHeaderBytes, what: "trailer") else { return false }
                if line.isEmpty { return true }
                let total = bytes + (start - lineStart)
                if fields + 1 > limits.maxHeaderFields || total > limits.maxHeaderBytes {
                    throw HTTPParseError(.headersTooLarge, "trailers too large")
                }
                // Trailers are checked for syntax and then dropped: nothing here reads them, and
                // merging them into the head would let a body rewrite its own framing.
                _ = try line.withUnsafeBufferPointer { bytes throws(HTTPParseError) in try Self.parseField(bytes) }
                step = .trailers(fields: fields + 1, bytes: total)
            }
        }
    }

    /// Takes one CRLF-terminated line (without the CRLF), or nil when it has not fully arrived.
    private mutating func takeLine(limit: Int, what: String) throws(HTTPParseError) -> [UInt8]? {
        var index = start
        let end = min(buffer.count, start + limit + 2)
        while index < end, buffer[index] != 0x0A { index += 1 }
        guard index < end else {
            if buffer.count - start > limit + 1 { throw .bad("\(what) too long") }
            return nil
        }
        guard index > start, buffer[index - 1] == 0x0D else { throw .bad("bare LF line ending") }
        let line = Array(buffer[start..<index - 1])
        start = index + 1
        return line
    }

    private static func parseChunkSize(_ line: [UInt8]) throws(HTTPParseError) -> Int {
        do {
            return try ChunkSize.parse(line[...])
        } catch {
            switch error {
            case .malformed: throw .bad("malformed chunk size")
            case .tooLarge: throw HTTPParseError(.payloadTooLarge, "chunk too large")
            case .controlCharacterInExtension: throw .bad("control character in chunk extension")
            }
        }
    }
}

/// Where the search for the end of a head stands between reads.
private struct HeadScan {
    let start: Int
    var scanFrom: Int
    var lineCount: Int

    /// Finds the end of the head (just past CRLF CRLF), enforcing the size limits on the way.
    mutating func findEnd(in bytes: UnsafeBufferPointer<UInt8>, limits: HTTPLimits) throws(HTTPParseError) -> Int? {
        var index = scanFrom
        while index < bytes.count {
            guard bytes[index] == 0x0A else {
                index += 1
                continue
            }
            // Limits before syntax: read in smaller pieces, these bytes would already have been
            // refused by the checks after the loop, before this LF arrived.
            if lineCount == 0, index - start > limits.maxRequestLineBytes + 2 {
                throw HTTPParseError(.uriTooLong, "request line too long")
            }
            if index - start > limits.maxHeaderBytes + 4 {
                throw HTTPParseError(.headersTooLarge, "request head over \(limits.maxHeaderBytes) bytes")
            }
            if index == start || bytes[index - 1] != 0x0D { throw HTTPParseError.bad("bare LF line ending") }
            lineCount += 1
            if lineCount == 1, index + 1 - start > limits.maxRequestLineBytes + 2 {
                throw HTTPParseError(.uriTooLong, "request line too long")
            }
            if index + 1 - start > limits.maxHeaderBytes + 2 {
                throw HTTPParseError(.headersTooLarge, "request head over \(limits.maxHeaderBytes) bytes")
            }
            // An empty line (CRLF right after the previous line's LF) ends the head.
            if lineCount > 1, index - 2 >= start, bytes[index - 2] == 0x0A {
                scanFrom = index + 1
                return index + 1
            }
            if lineCount > limits.maxHeaderFields + 1 {
                throw HTTPParseError(.headersTooLarge, "more than \(limits.maxHeaderFields) header fields")
            }
            index += 1
        }
        scanFrom = index
        let pending = bytes.count - start
        if lineCount == 0, pending > limits.maxRequestLineBytes + 2 {
            throw HTTPParseError(.uriTooLong, "request line too long")
        }
        if pending > limits.maxHeaderBytes + 4 {
            throw HTTPParseError(.headersTooLarge, "request head over \(limits.maxHeaderBytes) bytes")
        }
        return nil
    }
}

/// Walks the CRLF-terminated lines of a complete head.
private struct LineCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    mutating func nextLine() -> UnsafeBufferPointer<UInt8>? {
        guard position < bytes.count else { return nil }
        var index = position
        while index < bytes.count, bytes[index] != 0x0A { index += 1 }
        // The scanner already proved every LF is preceded by CR.
        let line = UnsafeBufferPointer(rebasing: bytes[position..<max(position, index - 1)])
        position = index + 1
        return line
    }
}
