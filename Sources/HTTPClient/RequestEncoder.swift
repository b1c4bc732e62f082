/// Writes a request head and body as HTTP/1.1 bytes.
enum RequestEncoder {
    /// Headers the client writes itself; the caller's are dropped so framing and connection
    /// handling cannot be confused (request smuggling, a `Connection: close` we would not honour).
    private static let managedHeaders: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "accept-encoding", "te", "upgrade", "keep-alive",
        "proxy-connection", "trailer",
    ]

    static func encode(_ request: HTTPClientRequest, url: RequestURL) throws(HTTPClientError) -> [UInt8] {
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(isTokenByte) else { throw .invalidRequest("method is not a token") }
        var head = "\(request.method) \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\n"
        var hasUserAgent = false
        for (name, value) in request.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { throw .invalidRequest("a header name is not a token") }
            // A line break in a value would start a header (or a request) of the value's choosing.
            guard value.utf8.allSatisfy({ $0 != 0x0D && $0 != 0x0A && $0 != 0x00 }) else {
                throw .invalidRequest("header \(name) has a line break or NUL in its value")
            }
            let lowered = String(decoding: name.utf8.map(ASCII.lower), as: UTF8.self)
            if managedHeaders.contains(lowered) { continue }
            if lowered == "user-agent" { hasUserAgent = true }
            head += "\(name): \(value)\r\n"
        }
        if !hasUserAgent { head += "User-Agent: siwa-server\r\n" }
        head += "Accept-Encoding: gzip\r\n"
        // A body-less GET or HEAD says nothing; a POST says 0 so the server need not guess.
        if !request.body.isEmpty || !(request.method == "GET" || request.method == "HEAD") {
            head += "Content-Length: \(request.body.count)\r\n"
        }
        head += "\r\n"
        var bytes = Array(head.utf8)
        bytes.append(contentsOf: request.body)
        return bytes
    }

    /// RFC 9110 §5.6.2 tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
