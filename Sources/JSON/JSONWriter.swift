/// Compact JSON output with members in the order given, so responses and tokens are
/// byte-for-byte predictable.
public enum JSONWriter {
    public static func string(_ value: JSONValue) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, into: &output)
        return output
    }

    public static func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let number): output.append(contentsOf: String(number).utf8)
        case .double(let number): output.append(contentsOf: (number.isFinite ? "\(number)" : "null").utf8)
        case .string(let text): writeString(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.storage.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Per byte: 0 copies as is, 1 is escaped, 2 may start U+2028 or U+2029 (E2 80 A8/A9).
    private static let escapeClass: [UInt8] = (0...255).map { byte in
        switch byte {
        case 0..<0x20, 0x22, 0x26, 0x3C, 0x3E, 0x5C, 0x7F: 1
        case 0xE2: 2
        default: 0
        }
    }

    /// Escapes quotes, backslashes and control characters, and also `<`, `>`, `&`, U+2028 and
    /// U+2029 so a value can sit inside an HTML `<script>` block or a JS string safely. Works on
    /// the UTF-8 bytes, copying runs that need no escape in one go (this is on every response).
    public static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            let count = bytes.count
            var runStart = 0
            var index = 0
            while index < count {
                let byte = bytes[index]
                switch escapeClass[Int(byte)] {
                case 0:
                    index += 1
                    continue
                case 2:
                    guard index + 2 < count, bytes[index + 1] == 0x80, bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 else {
                        index += 1
                        continue
                    }
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                    appendUnicodeEscape(bytes[index + 2] == 0xA8 ? 0x2028 : 0x2029, into: &output)
                    index += 3
                default:
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                    switch byte {
                    case 0x22: output.append(contentsOf: #"\""#.utf8)
                    case 0x5C: output.append(contentsOf: #"\\"#.utf8)
                    case 0x0A: output.append(contentsOf: #"\n"#.utf8)
                    case 0x0D: output.append(contentsOf: #"\r"#.utf8)
                    case 0x09: output.append(contentsOf: #"\t"#.utf8)
                    default: appendUnicodeEscape(UInt32(byte), into: &output)
                    }
                    index += 1
                }
                runStart = index
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<count]))
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func appendUnicodeEscape(_ value: UInt32, into output: inout [UInt8]) {
        output.append(contentsOf: #"\u"#.utf8)
        for shift in stride(from: 12, through: 0, by: -4) {
            output.append(hexDigits[Int((value >> UInt32(shift)) & 0xF)])
        }
    }
}
