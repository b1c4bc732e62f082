/// Text's line ends made CRLF, the only line end in mail (RFC 5322 §2.1, RFC 5321 §2.3.8): a
/// bare CR, a bare LF and CRLF each become one CRLF, so no lone CR or LF is ever sent.
enum LineEnds {
    static func crlf(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.underestimatedCount + 16)
        var afterCR = false
        for byte in bytes {
            if afterCR {
                afterCR = false
                // The CR's line end is already written.
                if byte == 0x0A { continue }
            }
            if byte == 0x0D || byte == 0x0A {
                output += [0x0D, 0x0A]
                afterCR = byte == 0x0D
            } else {
                output.append(byte)
            }
        }
        return output
    }
}
