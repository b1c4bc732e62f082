/// The bytes that follow `DATA` (RFC 5321 §4.5.2): every line ended by CRLF (`LineEnds`), a
/// `.` doubled at the start of a line (so a line of just `.` in the message cannot end it
/// early), and the final `.` line.
enum SMTPDataEncoder {
    /// A line's octets without its CRLF (RFC 5321 §4.5.3.1.6; the doubled dot is not counted).
    static let maxLineBytes = 998

    /// Nil when a line is longer than `maxLineBytes`.
    static func encode(_ message: some Sequence<UInt8>) -> [UInt8]? {
        let text = LineEnds.crlf(message)
        var output: [UInt8] = []
        output.reserveCapacity(text.count + text.count / 64 + 8)
        var lineLength = 0
        for byte in text {
            if byte == 0x0D || byte == 0x0A {
                // Only CRLF pairs are left.
                output.append(byte)
                lineLength = 0
                continue
            }
            if lineLength == 0, byte == UInt8(ascii: ".") { output.append(byte) }
            lineLength += 1
            guard lineLength <= maxLineBytes else { return nil }
            output.append(byte)
        }
        if !text.isEmpty, text.last != 0x0A { output += [0x0D, 0x0A] }
        output += Array(".\r\n".utf8)
        return output
    }
}
