import Logging
import WireFormat

/// The few pieces of JSON a log line needs, appended straight into a byte buffer: faster than
/// building a dictionary for `JSONSerialization`, and the key order stays as written.
enum JSONLineEncoding {
    /// A JSON string literal. Quotes, backslashes and control characters are escaped; everything
    /// else, including non-ASCII, is copied as UTF-8 (a Swift `String` is always valid UTF-8).
    static func appendString(_ string: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        // As raw bytes: the `UTF8View` iterator cost more than the rest of an access line.
        var string = string
        string.withUTF8 { bytes in
            // Most messages and values need no escaping: copy them in one go.
            guard bytes.contains(where: needsEscape) else {
                buffer.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "\n"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "t"))
                case 0..<0x20, 0x7F:
                    buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    Hex.append(byte, to: &buffer)
                default:
                    buffer.append(byte)
                }
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// `"key":` preceded by a comma; for members after the first.
    static func appendKey(_ key: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: ","))
        appendString(key, to: &buffer)
        buffer.append(UInt8(ascii: ":"))
    }

    /// A metadata value: strings as strings, nested dictionaries and arrays as objects and arrays,
    /// and numbers and booleans logged as such kept as JSON numbers and booleans.
    static func appendValue(_ value: Logger.MetadataValue, to buffer: inout [UInt8]) {
        switch value {
        case .string(let string):
            appendString(string, to: &buffer)
        case .stringConvertible(let convertible):
            switch convertible {
            case let flag as Bool:
                buffer.append(contentsOf: (flag ? "true" : "false").utf8)
            case let integer as any BinaryInteger:
                buffer.append(contentsOf: String(describing: integer).utf8)
            case let double as Double where double.isFinite:
                buffer.append(contentsOf: String(describing: double).utf8)
            case let float as Float where float.isFinite:
                buffer.append(contentsOf: String(describing: float).utf8)
            default:
                appendString(convertible.description, to: &buffer)
            }
        case .dictionary(let dictionary):
            buffer.append(UInt8(ascii: "{"))
            for (index, member) in dictionary.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                appendString(member.key, to: &buffer)
                buffer.append(UInt8(ascii: ":"))
                appendValue(member.value, to: &buffer)
            }
            buffer.append(UInt8(ascii: "}"))
        case .array(let array):
            buffer.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                appendValue(element, to: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        }
    }
}
