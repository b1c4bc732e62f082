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

        // Written straight into the output bytes: a String built by appends and then copied
        // cost a fifth of a small response's user time.
        append("HTTP/1.1 ", to: &output)
        appendDecimal(response.status, to: &output)
        append(" ", to: &output)
        appendHeaderText(HTTPStatus.reasonPhrase(response.status), to: &output)
        append("\r\nDate: ", to: &output)
        appendHeaderText(context.date, to: &output)
        if bodyAllowed {
            append("\r\nContent-Length: ", to: &output)
            appendDecimal(response.body.count, to: &output)
        }
        append("\r\nX-Request-Id: ", to: &output)
        appendHeaderText(context.requestID, to: &output)
        if !context.keepAlive {
            append("\r\nConnection: close", to: &output)
        } else if context.version == .http1_0 {
            append("\r\nConnection: keep-alive", to: &output)
        }
        for (name, value) in response.headers {
            append("\r\n", to: &output)
            appendHeaderText(name, to: &output)
            append(": ", to: &output)
            appendHeaderText(value, to: &output)
        }
        append("\r\n\r\n", to: &output)
        guard bodyAllowed, !context.isHead else { return 0 }
        output.append(contentsOf: response.body)
        return response.body.count
    }

    /// The interim response to `Expect: 100-continue`.
    static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// A CR or LF in a name or value would split the response; handlers may echo user input
    /// into headers such as `Location`, so this is enforced here, once: each becomes a space
    /// (as does NUL). They are single bytes in UTF-8 and never inside a longer sequence.
    private static func appendHeaderText(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            if bytes.allSatisfy({ $0 != 0x0D && $0 != 0x0A && $0 != 0x00 }) {
                output.append(contentsOf: bytes)
            } else {
                for byte in bytes { output.append(byte == 0x0D || byte == 0x0A || byte == 0x00 ? 0x20 : byte) }
            }
        }
    }

    private static func append(_ text: StaticString, to output: inout [UInt8]) {
        text.withUTF8Buffer { output.append(contentsOf: $0) }
    }

    /// Statuses and lengths: a few digits, a small string that needs no allocation.
    private static func appendDecimal(_ value: Int, to output: inout [UInt8]) {
        var digits = String(value)
        digits.withUTF8 { output.append(contentsOf: $0) }
    }
}
