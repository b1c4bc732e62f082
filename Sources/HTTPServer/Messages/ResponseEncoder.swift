/// Serializes a response head and body. Pure: everything that varies per request comes in as
/// arguments, so it is tested without a socket.
struct ResponseEncoder {
    struct Context: Sendable {
        var version: HTTPVersion
        var keepAlive: Bool
        var isHead: Bool
        var acceptsGzip: Bool
        var requestID: String
        /// Set when the response is encoded, from the loop's cached `Date` value.
        var date = ""
    }

    /// Appends the wire form to `output`; returns the body bytes sent.
    static func encode(_ response: HTTPResponse, context: Context, into output: inout [UInt8]) -> Int {
        var response = response
        let bodyAllowed = !HTTPStatus.forbidsBody(response.status)
        if bodyAllowed, response.body.count >= Gzip.minimumBodyBytes,
            Gzip.isCompressible(contentType: response.headers["Content-Type"]),
            !response.headers.contains("Content-Encoding")
        {
            // Vary goes on every response that could have been compressed, so that caches keep
            // the two forms apart.
            response.headers.add("Vary", "Accept-Encoding")
            if context.acceptsGzip, let compressed = Gzip.compress(response.body) {
                response.body = compressed
                response.headers.add("Content-Encoding", "gzip")
            }
        }

        var head = "HTTP/1.1 \(response.status) \(HTTPStatus.reasonPhrase(response.status))\r\nDate: \(context.date)\r\n"
        if bodyAllowed {
            head += "Content-Length: \(response.body.count)\r\n"
        }
        head += "X-Request-Id: \(context.requestID)\r\n"
        if !context.keepAlive {
            head += "Connection: close\r\n"
        } else if context.version == .http1_0 {
            head += "Connection: keep-alive\r\n"
        }
        for (name, value) in response.headers {
            head += name
            head += ": "
            head += Self.headerSafe(value)
            head += "\r\n"
        }
        head += "\r\n"
        output.append(contentsOf: head.utf8)
        guard bodyAllowed, !context.isHead else { return 0 }
        output.append(contentsOf: response.body)
        return response.body.count
    }

    /// The interim response to `Expect: 100-continue`.
    static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// A CR or LF in a value would split the response; handlers may echo user input into
    /// headers such as `Location`, so this is enforced here, once.
    private static func headerSafe(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else { return value }
        var safe = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            safe.append(scalar == "\r" || scalar == "\n" || scalar == "\0" ? " " : scalar)
        }
        return String(safe)
    }
}
