// libFuzzer target for the HTTP/1.1 request parser (Sources/HTTPServer/Parsing).
//
// Built by Scripts/fuzz with swiftc together with the parser's sources, so there is no module
// boundary and no Foundation: the parser's types are used directly.
//
// It checks properties, not just "does not crash":
//   1. Segmentation does not matter. The same bytes fed whole, fed in three pieces cut at
//      positions derived from the input, and (for short inputs) fed one byte at a time give the
//      same requests (method, target, path, query, version, headers, body, keep-alive,
//      100-continue, framing) and end the same way: the same error status after the same
//      requests, or waiting for more bytes in the same parser state.
//   2. Limits hold: a body never exceeds maxBodyBytes, a head never has more than
//      maxHeaderFields fields, a head's request line and fields fit in maxHeaderBytes.
//   3. What comes out is well formed: framing agrees with the body, HTTP/1.1 has exactly one
//      Host, no field value holds CR, LF or NUL, the target has no spaces or controls and
//      splits into path and query, `.head` is reported at most once and only before a request
//      that has a body.
// Any violation traps with fatalError, which libFuzzer records as a crash.

/// Small limits so that every 413/414/431 path is reachable with inputs of a few hundred bytes
/// (libFuzzer's default maximum length is 4 KiB).
private let fuzzLimits: HTTPLimits = {
    var limits = HTTPLimits()
    limits.maxHeaderBytes = 512
    limits.maxHeaderFields = 8
    limits.maxRequestLineBytes = 128
    limits.maxBodyBytes = 256
    limits.maxChunkLineBytes = 64
    return limits
}()

/// Inputs up to this size are also fed one byte at a time (quadratic in the worst case, so kept
/// short to leave the fuzzer fast).
private let byteByByteMaxSize = 1024

/// A request reduced to plain values that can be compared.
private struct SeenRequest: Equatable {
    var method: String
    var target: String
    var path: String
    var query: String?
    var version: String
    var headers: [String]
    var keepAlive: Bool
    var expectsContinue: Bool
    var framing: String
    var body: [UInt8]
}

private enum Ending: Equatable {
    /// Waiting for more bytes; the parser's observable state at that point.
    case needsMore(receivingBody: Bool, partialRequest: Bool, bufferedHeadBytes: Int?)
    case error(status: Int)
}

private struct Outcome: Equatable {
    var requests: [SeenRequest] = []
    var ending: Ending = .needsMore(receivingBody: false, partialRequest: false, bufferedHeadBytes: 0)
}

private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("property violated: \(message())") }
}

private func framingText(_ framing: BodyFraming) -> String {
    switch framing {
    case .none: "none"
    case .length(let n): "length(\(n))"
    case .chunked: "chunked"
    }
}

/// Checks one head on its own and reduces it to comparable values.
private func checkHead(_ head: HTTPRequestHead, limits: HTTPLimits) {
    check(head.headers.count <= limits.maxHeaderFields, "\(head.headers.count) header fields > \(limits.maxHeaderFields)")
    // Counted in Unicode scalars: the parser decodes field values leniently, so a byte that is
    // not UTF-8 becomes U+FFFD (3 bytes of UTF-8) but stays one scalar; scalars <= bytes received.
    var headBytes = head.method.rawValue.unicodeScalars.count + 1 + head.target.unicodeScalars.count + 1 + 8
    var hosts = 0
    for field in head.headers {
        check(!field.name.isEmpty, "empty field name")
        check(!field.value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }, "CR, LF or NUL in a field value")
        headBytes += field.name.unicodeScalars.count + 1 + field.value.unicodeScalars.count
        if HTTPHeaders.equalsIgnoringCase(field.name, "host") { hosts += 1 }
    }
    check(headBytes <= limits.maxHeaderBytes, "head of \(headBytes) bytes > \(limits.maxHeaderBytes)")
    if head.version == .http1_1 { check(hosts == 1, "HTTP/1.1 head with \(hosts) Host fields") }
    check(hosts <= 1, "more than one Host")
    check(!head.method.rawValue.isEmpty, "empty method")
    check(!head.target.isEmpty && !head.target.utf8.contains { $0 <= 0x20 || $0 >= 0x7F }, "space or control in target")
    if head.target.hasPrefix("/") {
        let rebuilt = head.path + (head.query.map { "?" + $0 } ?? "")
        check(rebuilt == head.target, "path and query do not rebuild the target")
    }
    check(head.path.hasPrefix("/") || head.path == "*", "path \(head.path.utf8.count) bytes not starting with /")
    if case .length(let n) = head.framing { check(n > 0 && n <= limits.maxBodyBytes, "Content-Length framing \(n)") }
    if head.framing == .chunked { check(head.version == .http1_1, "chunked on HTTP/1.0") }
    if head.version == .http1_0, head.headers["connection"] == nil { check(!head.keepAlive, "HTTP/1.0 keep-alive without asking") }
    if head.expectsContinue { check(head.framing != .none, "100-continue without a body") }
}

private func seen(_ head: HTTPRequestHead, body: [UInt8]) -> SeenRequest {
    SeenRequest(
        method: head.method.rawValue, target: head.target, path: head.path, query: head.query,
        version: head.version.text, headers: head.headers.map { "\($0.name): \($0.value)" },
        keepAlive: head.keepAlive, expectsContinue: head.expectsContinue,
        framing: framingText(head.framing), body: body)
}

/// Feeds `input` cut at `cuts` (ascending offsets), asking for events after every piece, as the
/// server does after every read.
private func run(_ input: UnsafeBufferPointer<UInt8>, cuts: [Int]) -> Outcome {
    let limits = fuzzLimits
    var parser = RequestParser(limits: limits)
    var outcome = Outcome()
    var pendingHead: SeenRequest?
    var from = 0
    for end in cuts + [input.count] where end >= from {
        // The raw-buffer overload is the one the server uses after read(2).
        parser.append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: input[from..<end])))
        from = end
        do {
            while let event = try parser.next() {
                switch event {
                case .head(let head):
                    checkHead(head, limits: limits)
                    check(pendingHead == nil, "head reported twice")
                    check(head.framing != .none, "head event for a request without a body")
                    pendingHead = seen(head, body: [])
                case .request(let head, let body):
                    checkHead(head, limits: limits)
                    check(body.count <= limits.maxBodyBytes, "body of \(body.count) bytes > \(limits.maxBodyBytes)")
                    switch head.framing {
                    case .none: check(body.isEmpty, "body without framing")
                    case .length(let n): check(body.count == n, "body of \(body.count) bytes for Content-Length \(n)")
                    case .chunked: break
                    }
                    var request = seen(head, body: body)
                    if let earlier = pendingHead {
                        request.body = []
                        check(earlier == request, "request differs from its reported head")
                        request.body = body
                    }
                    pendingHead = nil
                    outcome.requests.append(request)
                }
            }
        } catch {
            check([400, 413, 414, 431].contains(error.status), "unexpected status \(error.status)")
            outcome.ending = .error(status: error.status)
            return outcome
        }
    }
    let receivingBody = parser.isReceivingBody
    check(receivingBody == (pendingHead != nil), "receiving a body without having reported its head")
    check(parser.bufferedByteCount <= input.count, "more bytes buffered than were fed")
    outcome.ending = .needsMore(
        receivingBody: receivingBody,
        partialRequest: parser.hasPartialRequest,
        // While reading a chunked body, how much is still buffered depends on the pieces; while
        // waiting for a head it must not.
        bufferedHeadBytes: receivingBody ? nil : parser.bufferedByteCount)
    return outcome
}

private func describe(_ outcome: Outcome) -> String {
    "\(outcome.requests.count) request(s) \(outcome.requests.map { "\($0.method) \($0.target) body=\($0.body.count)" }), then \(outcome.ending)"
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let whole = run(input, cuts: [])

    if size >= 2 {
        // Cut points derived from the input, so the fuzzer can steer them.
        let a = (Int(input[0]) << 8 | Int(input[1])) % (size + 1)
        let b = (Int(input[size - 1]) &* 131 &+ size) % (size + 1)
        let pieces = run(input, cuts: [min(a, b), max(a, b)])
        check(pieces == whole, "fed in pieces at \(min(a, b)), \(max(a, b)): \(describe(pieces)); fed whole: \(describe(whole))")
    }
    if size <= byteByByteMaxSize {
        let bytes = run(input, cuts: Array(0..<size))
        check(bytes == whole, "fed byte by byte: \(describe(bytes)); fed whole: \(describe(whole))")
    }
    return 0
}
