import CLibPQ

extension PostgresValue {
    /// Decodes a column value in PostgreSQL's text output form. Results are asked for in text
    /// (not binary) so that every type, `timestamptz` or `jsonb` included, arrives readable;
    /// only the few types below are turned into numbers, booleans or bytes.
    init(text: UnsafeBufferPointer<UInt8>, type: Oid) {
        switch type {
        case PostgresType.int8, PostgresType.int4, PostgresType.int2, PostgresType.oid:
            self = Self.integer(text).map(Self.integer) ?? .text(String(decoding: text, as: UTF8.self))
        case PostgresType.float8, PostgresType.float4:
            self = Double(String(decoding: text, as: UTF8.self)).map(Self.real) ?? .text(String(decoding: text, as: UTF8.self))
        case PostgresType.numeric:
            // `sum(bigint)` and `count(*) * 1.0` are numeric; whole values read as integers.
            let string = String(decoding: text, as: UTF8.self)
            if let number = Self.integer(text) {
                self = .integer(number)
            } else if let number = Double(string) {
                self = .real(number)
            } else {
                self = .text(string)
            }
        case PostgresType.bool:
            self = .boolean(text.first == UInt8(ascii: "t"))
        case PostgresType.bytea:
            self = .blob(Self.bytea(text))
        default:
            self = .text(String(decoding: text, as: UTF8.self))
        }
    }

    /// A decimal integer, or nil when `text` is not one or it overflows 64 bits.
    static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative { index = 1 }
        guard index < text.count else { return nil }
        var value: Int64 = 0
        while index < text.count {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            // Accumulated on the negative side for negatives, so Int64.min parses too.
            let (next, overflowB) = negative
                ? shifted.subtractingReportingOverflow(Int64(digit))
                : shifted.addingReportingOverflow(Int64(digit))
            guard !overflowA, !overflowB else { return nil }
            value = next
            index += 1
        }
        return value
    }

    /// `bytea` in text form: `\x` then two hex digits a byte (the default `bytea_output`), or
    /// the older escape form, which libpq decodes.
    static func bytea(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        if text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"), text.count % 2 == 0 {
            var bytes = [UInt8](repeating: 0, count: (text.count - 2) / 2)
            var valid = true
            bytes.withUnsafeMutableBufferPointer { output in
                for index in output.indices {
                    let high = hexValue(text[2 + 2 * index])
                    let low = hexValue(text[3 + 2 * index])
                    guard high < 16, low < 16 else {
                        valid = false
                        return
                    }
                    output[index] = high << 4 | low
                }
            }
            if valid { return bytes }
        }
        return unescapedBytea(text)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: 16
        }
    }

    private static func unescapedBytea(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        // PQunescapeBytea reads a C string: copy with a terminating NUL.
        let terminated = Array(text) + [0]
        var count = 0
        guard let decoded = terminated.withUnsafeBufferPointer({ PQunescapeBytea($0.baseAddress, &count) }) else { return [] }
        defer { PQfreemem(decoded) }
        return Array(UnsafeBufferPointer(start: decoded, count: count))
    }
}
