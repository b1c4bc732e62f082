import WireFormat

/// The quoted-printable transfer encoding (RFC 2045 §6.7) of text whose line ends are CRLF:
/// CRLF stays a line end; `=`, control bytes, non-ASCII bytes, and a space or tab at the end of
/// a line become `=XX`; lines longer than 76 characters are cut with a soft break (`=`). Every
/// output line is printable ASCII of at most 76 characters.
enum QuotedPrintable {
    static let maxLineLength = 76

    /// The encoded lines joined by CRLF, without a line end after the last.
    static func encode(_ text: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count + text.count / 8)
        var lines = text.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        if text.last == 0x0A { lines.removeLast() }
        for (index, line) in lines.enumerated() {
            if index > 0 { output += [0x0D, 0x0A] }
            encodeLine(line, into: &output)
        }
        if text.last == 0x0A { output += [0x0D, 0x0A] }
        return output
    }

    private static func encodeLine(_ line: ArraySlice<UInt8>, into output: inout [UInt8]) {
        var length = 0
        for index in line.indices {
            let byte = line[index]
            let isLast = index == line.index(before: line.endIndex)
            let literal = (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=")) || ((byte == 0x20 || byte == 0x09) && !isLast)
            let width = literal ? 1 : 3
            // Room for the soft break's `=`, unless this is the line's last token.
            if length + width > (isLast ? maxLineLength : maxLineLength - 1) {
                output += [UInt8(ascii: "="), 0x0D, 0x0A]
                length = 0
            }
            if literal {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "="))
                Hex.append(byte, to: &output, uppercase: true)
            }
            length += width
        }
    }
}
