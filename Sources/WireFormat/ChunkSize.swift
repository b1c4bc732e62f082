/// The size line of HTTP/1.1's chunked transfer coding (RFC 9112 §7.1): hex digits, then
/// optional `;extension`s, which are ignored. Read by the server's request parser and the
/// client's response decoder alike.
public enum ChunkSize {
    public enum Failure: Error, Equatable, Sendable {
        /// No digits, or something other than whitespace and `;` after them.
        case malformed
        /// More than any body would be allowed to be.
        case tooLarge
        /// A control character in an extension (they are tokens or quoted strings, never CTLs).
        case controlCharacterInExtension
    }

    /// The size from a line without its CRLF.
    public static func parse(_ line: ArraySlice<UInt8>) throws(Failure) -> Int {
        var size = 0
        var index = line.startIndex
        while index < line.endIndex, let digit = Hex.value(line[index]) {
            // 2^56 is far beyond any allowed body; refusing earlier keeps the arithmetic exact.
            // Bounding the value rather than the digits lets leading zeros through, as the RFC does.
            guard size < 1 << 56 else { throw .tooLarge }
            size = size << 4 | Int(digit)
            index += 1
        }
        guard index > line.startIndex else { throw .malformed }
        // Bad whitespace (BWS) may come before `;`.
        var rest = line[index...].drop { $0 == 0x20 || $0 == 0x09 }
        if let first = rest.first {
            guard first == UInt8(ascii: ";") else { throw .malformed }
            rest = rest.dropFirst()
            for byte in rest where byte < 0x20 && byte != 0x09 || byte == 0x7F {
                throw .controlCharacterInExtension
            }
        }
        return size
    }
}
