import Testing
@testable import HTTPServer

@Suite struct ResponseEncoderTests {
    private func encode(_ response: HTTPResponse, keepAlive: Bool = true, version: HTTPVersion = .http1_1, head: Bool = false, gzip: Bool = false) -> String {
        var output: [UInt8] = []
        let context = ResponseEncoder.Context(
            version: version, keepAlive: keepAlive, isHead: head, acceptsGzip: gzip, requestID: "req-1",
            date: "Sun, 22 Nov 2026 10:00:00 GMT")
        _ = ResponseEncoder.encode(response, context: context, into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    @Test func writesStatusDateLengthAndRequestID() {
        let text = encode(.json(200, #"{"status":"ok"}"#))
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\nDate: Sun, 22 Nov 2026 10:00:00 GMT\r\nContent-Length: 15\r\nX-Request-Id: req-1\r\n"))
        #expect(text.hasSuffix("\r\n\r\n{\"status\":\"ok\"}"))
        #expect(!text.contains("Connection:"))
    }

    @Test func saysConnectionCloseOrKeepAliveWhenItMatters() {
        #expect(encode(HTTPResponse(), keepAlive: false).contains("Connection: close\r\n"))
        #expect(encode(HTTPResponse(), keepAlive: true, version: .http1_0).contains("Connection: keep-alive\r\n"))
    }

    @Test func headKeepsTheLengthAndDropsTheBody() {
        let text = encode(HTTPResponse(contentType: "text/plain", body: "hello"), head: true)
        #expect(text.contains("Content-Length: 5\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"))
    }

    @Test func noContentHasNoLengthOrBody() {
        let text = encode(HTTPResponse(status: 204))
        #expect(text.hasPrefix("HTTP/1.1 204 No Content\r\n"))
        #expect(!text.contains("Content-Length"))
    }

    @Test func compressesLargeTextOnlyWhenAccepted() {
        let big = HTTPResponse(contentType: "application/json", body: String(repeating: "x", count: 2000))
        let plain = encode(big, gzip: false)
        #expect(plain.contains("Vary: Accept-Encoding"))
        #expect(!plain.contains("Content-Encoding"))
        #expect(plain.contains("Content-Length: 2000"))
        let compressed = encode(big, gzip: true)
        #expect(compressed.contains("Content-Encoding: gzip"))
        #expect(compressed.contains("Vary: Accept-Encoding"))
        #expect(!compressed.contains("Content-Length: 2000"))
        let small = encode(HTTPResponse(contentType: "application/json", body: "{}"), gzip: true)
        #expect(!small.contains("Content-Encoding") && !small.contains("Vary"))
    }

    @Test func headerValuesCannotSplitTheResponse() {
        let text = encode(HTTPResponse(status: 302, headers: ["Location": "/x\r\nSet-Cookie: evil=1"]))
        #expect(!text.contains("\r\nSet-Cookie"))
        #expect(text.contains("Location: /x  Set-Cookie: evil=1\r\n"))
    }

    @Test func refusalsWithoutAnErrorShapeArePlainTextAndKeepTheirHeaders() {
        let response = HTTPRefusal.methodNotAllowed(.delete, allow: "GET, HEAD").plainTextResponse
        #expect(response.status == 405)
        #expect(String(decoding: response.body, as: UTF8.self) == "method_not_allowed: DELETE is not allowed here\n")
        #expect(response.headers["content-type"] == "text/plain; charset=utf-8")
        #expect(response.headers["allow"] == "GET, HEAD")
    }
}

@Suite struct GzipTests {
    @Test(arguments: [
        ("gzip", true), ("gzip;q=0", false), ("gzip; q=0.000", false), ("gzip;q=0.5", true), ("deflate, br", false),
        ("*", true), ("*;q=0", false), ("gzip;q=0, *", false), ("br, *;q=0.1", true), ("GZIP", true), ("", false),
    ])
    func honoursAcceptEncoding(_ header: String, _ accepted: Bool) {
        #expect(Gzip.isAccepted(by: header) == accepted)
    }

    @Test func roundTripsThroughZlib() {
        let original = Array(String(repeating: "Sign in with Apple ", count: 200).utf8)
        let compressed = Gzip.compress(original)
        #expect(compressed != nil)
        #expect(compressed!.count < original.count)
        #expect(compressed!.prefix(2) == [0x1F, 0x8B])
        #expect(Gzip.decompress(compressed!, limit: 1 << 20) == original)
        #expect(Gzip.decompress(compressed!, limit: 100) == nil)
    }

    @Test func formatsTheDateHeader() {
        #expect(DateHeaderCache.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test func validatesRequestIDs() {
        #expect(RequestID.isValid("abc-DEF_1.2"))
        #expect(!RequestID.isValid(""))
        #expect(!RequestID.isValid(String(repeating: "a", count: 129)))
        #expect(!RequestID.isValid("has space"))
        #expect(!RequestID.isValid("new\nline"))
        #expect(RequestID.make() != RequestID.make())
    }

    /// New ids: the process's 16 hex digits, a dash, then the counter in lower-case hex
    /// without leading zeros, one more each time.
    @Test func newRequestIDsAreThePrefixAndTheCounter() throws {
        let ids = (0..<600).map { _ in RequestID.make() }
        let prefix = try #require(ids.first?.split(separator: "-").first)
        #expect(prefix.utf8.count == 16)
        var previous: UInt64?
        for id in ids {
            let parts = id.split(separator: "-", omittingEmptySubsequences: false)
            #expect(parts.count == 2 && parts[0] == prefix && RequestID.isValid(id), "\(id)")
            let counter = try #require(UInt64(parts[1], radix: 16), "\(id)")
            #expect(String(counter, radix: 16) == parts[1], "lower case, no leading zero: \(id)")
            // Other tests make ids meanwhile: the counter only grows.
            if let previous { #expect(counter > previous, "\(id)") }
            previous = counter
        }
    }
}
