import WireFormat

/// One `text/*` part of a message, UTF-8, in whichever transfer encoding is shorter:
/// quoted-printable (mostly ASCII: English, links stay readable) or base64 (mostly not:
/// Korean). Either keeps every line at most 76 characters of ASCII, and neither can produce
/// `=_`, which is why the message's boundary starts with it (RFC 2045 §6.7's suggestion).
struct MIMETextPart {
    enum TransferEncoding: String {
        case quotedPrintable = "quoted-printable"
        case base64
    }

    let contentType: String
    let transferEncoding: TransferEncoding
    /// The encoded body, lines joined by CRLF, without a line end after the last.
    let body: [UInt8]

    init(subtype: String, text: String) {
        contentType = "text/\(subtype); charset=UTF-8"
        let canonical = LineEnds.crlf(text.utf8)
        let quoted = QuotedPrintable.encode(canonical)
        let base64 = Self.base64Lines(canonical)
        if quoted.count <= base64.count {
            transferEncoding = .quotedPrintable
            body = quoted
        } else {
            transferEncoding = .base64
            body = base64
        }
    }

    /// Base64 in lines of 76 characters (RFC 2045 §6.8).
    private static func base64Lines(_ bytes: [UInt8]) -> [UInt8] {
        let encoded = Array(Base64.standard.encode(bytes).utf8)
        var output: [UInt8] = []
        output.reserveCapacity(encoded.count + encoded.count / 38)
        var start = 0
        while start < encoded.count {
            if start > 0 { output += [0x0D, 0x0A] }
            let end = min(start + 76, encoded.count)
            output += encoded[start..<end]
            start = end
        }
        return output
    }
}
