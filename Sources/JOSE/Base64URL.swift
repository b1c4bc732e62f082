/// base64url without padding (RFC 7515 §2). Decoding is strict: the URL alphabet only, no
/// padding, no whitespace, and no stray bits in the last character, so each token has exactly
/// one spelling.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            output.append(alphabet[Int(first >> 2)])
            output.append(alphabet[Int((first & 0x03) << 4 | (second ?? 0) >> 4)])
            if let second {
                output.append(alphabet[Int((second & 0x0F) << 2 | (third ?? 0) >> 6)])
                if let third { output.append(alphabet[Int(third & 0x3F)]) }
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    public static func encode(_ text: String) -> String { encode(Array(text.utf8)) }

    /// The bytes, or nil for anything that is not canonical unpadded base64url.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        if let result = text.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return result }
        return Array(text).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// Four characters at a time into a preallocated array: this runs three times for every
    /// token verified, so it avoids per-byte appends and generic iteration.
    static func decode(buffer text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = text.count
        let remainder = count % 4
        guard remainder != 1 else { return nil }
        let outputCount = count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
            decodeTable.withUnsafeBufferPointer { table in
                var input = 0
                var position = 0
                while input + 4 <= count {
                    let a = table[Int(text[input])], b = table[Int(text[input + 1])]
                    let c = table[Int(text[input + 2])], d = table[Int(text[input + 3])]
                    if (a | b | c | d) & 0xC0 != 0 { valid = false; break }
                    out[position] = a << 2 | b >> 4
                    out[position + 1] = b << 4 | c >> 2
                    out[position + 2] = c << 6 | d
                    input += 4
                    position += 3
                }
                if valid, remainder >= 2 {
                    let a = table[Int(text[input])], b = table[Int(text[input + 1])]
                    let c = remainder == 3 ? table[Int(text[input + 2])] : 0
                    if (a | b | c) & 0xC0 != 0 {
                        valid = false
                    } else {
                        out[position] = a << 2 | b >> 4
                        // Leftover bits must be zero, or two strings would decode the same.
                        if remainder == 2 {
                            if b & 0x0F != 0 { valid = false }
                        } else {
                            out[position + 1] = b << 4 | c >> 2
                            if c & 0x03 != 0 { valid = false }
                        }
                    }
                }
            }
            initialized = valid ? outputCount : 0
        }
        return valid ? output : nil
    }

    public static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }
}
