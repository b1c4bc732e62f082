/// Base64 (RFC 4648 §4) and base64url (§5), the one implementation in the package.
///
/// Decoding is strict: only the chosen alphabet, padding only as `padding` allows and only at
/// the end, no whitespace, and no stray bits in the last character, so every byte string has
/// exactly one accepted spelling (a token cannot be varied without changing its bytes).
public struct Base64: Sendable {
    public enum Alphabet: Sendable {
        /// `+` and `/`.
        case standard
        /// `-` and `_`.
        case url
        /// Either pair, for decoding text pasted from either kind of tool.
        case standardOrURL
    }

    public enum Padding: Sendable {
        /// Never written; refused when reading.
        case none
        /// Written; when reading, the text is a whole number of four-character groups.
        case required
        /// Written; when reading, accepted with or without it (but a partial pad is refused).
        case optional
    }

    public let alphabet: Alphabet
    public let padding: Padding

    public init(alphabet: Alphabet, padding: Padding) {
        self.alphabet = alphabet
        self.padding = padding
    }

    /// Unpadded base64url: JWS segments (RFC 7515 §2), session tokens, nonces and ids.
    public static let url = Base64(alphabet: .url, padding: .none)
    /// Padded standard base64: what `openssl base64` writes, and CSP hash sources.
    public static let standard = Base64(alphabet: .standard, padding: .required)

    @usableFromInline static let standardDigits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    @usableFromInline static let urlDigits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's 6-bit value, 0xFF for a byte outside the alphabet (`=` included: padding is
    /// taken off before the table is consulted).
    @usableFromInline static let standardTable = decodeTable(standardDigits)
    @usableFromInline static let urlTable = decodeTable(urlDigits)
    @usableFromInline static let eitherTable = decodeTable(standardDigits, urlDigits)

    private static func decodeTable(_ alphabets: [UInt8]...) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for alphabet in alphabets {
            for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        }
        return table
    }

    // MARK: Encoding

    /// Encoding with `.standardOrURL` writes the standard alphabet.
    @inlinable
    public func encode(_ bytes: some Collection<UInt8>) -> String {
        if let text = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    public func encode(_ text: String) -> String {
        var text = text
        return text.withUTF8 { encode(buffer: $0) }
    }

    /// Three bytes at a time straight into the string's storage: `c_hash` is encoded for every
    /// identity token verified, so no intermediate array and no generic iteration.
    @usableFromInline
    func encode(buffer input: UnsafeBufferPointer<UInt8>) -> String {
        let remainder = input.count % 3
        let tail = remainder == 0 ? 0 : (padding != .none ? 4 : remainder + 1)
        let outputCount = input.count / 3 * 4 + tail
        guard outputCount > 0 else { return "" }
        let digits = alphabet == .url ? Self.urlDigits : Self.standardDigits
        return digits.withUnsafeBufferPointer { digits in
            String(unsafeUninitializedCapacity: outputCount) { out in
                var position = 0
                var index = 0
                while index + 3 <= input.count {
                    let first = input[index], second = input[index + 1], third = input[index + 2]
                    out[position] = digits[Int(first >> 2)]
                    out[position + 1] = digits[Int((first & 0x03) << 4 | second >> 4)]
                    out[position + 2] = digits[Int((second & 0x0F) << 2 | third >> 6)]
                    out[position + 3] = digits[Int(third & 0x3F)]
                    index += 3
                    position += 4
                }
                if remainder != 0 {
                    let first = input[index]
                    let second = remainder == 2 ? input[index + 1] : 0
                    out[position] = digits[Int(first >> 2)]
                    out[position + 1] = digits[Int((first & 0x03) << 4 | second >> 4)]
                    if remainder == 2 {
                        out[position + 2] = digits[Int((second & 0x0F) << 2)]
                    } else if padding != .none {
                        out[position + 2] = UInt8(ascii: "=")
                    }
                    if padding != .none { out[position + 3] = UInt8(ascii: "=") }
                }
                return outputCount
            }
        }
    }

    // MARK: Decoding

    /// The bytes, or nil for anything that is not their one spelling under these rules.
    @inlinable
    public func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        if let result = text.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return result }
        return Array(text).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    public func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(buffer: $0) }
    }

    /// Four characters at a time into a preallocated array: this runs three times for every
    /// token verified, so it avoids per-byte appends and generic iteration.
    @usableFromInline
    func decode(buffer input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard let outputCount = decodedCount(input) else { return nil }
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
            valid = decode(input, into: out) != nil
            initialized = valid ? outputCount : 0
        }
        return valid ? output : nil
    }

    /// How many bytes `input` decodes to, or nil when its length (or padding) rules it out.
    public func decodedCount(_ input: UnsafeBufferPointer<UInt8>) -> Int? {
        Self.decodedCount(unpadded: unpaddedCount(input))
    }

    private static func decodedCount(unpadded count: Int) -> Int? {
        guard count >= 0, count % 4 != 1 else { return nil }
        return count / 4 * 3 + (count % 4 == 0 ? 0 : count % 4 - 1)
    }

    /// The characters before any padding, or -1 when padding is required and missing.
    private func unpaddedCount(_ input: UnsafeBufferPointer<UInt8>) -> Int {
        var count = input.count
        if padding != .none, count % 4 == 0, count > 0, input[count - 1] == UInt8(ascii: "=") {
            count -= input[count - 2] == UInt8(ascii: "=") ? 2 : 1
        } else if padding == .required, count % 4 != 0 {
            return -1
        }
        return count
    }

    /// Decodes into the caller's buffer, which holds at least `decodedCount(input)` bytes (a
    /// session token decodes onto the stack); returns how many were written, or nil.
    public func decode(_ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        let count = unpaddedCount(input)
        guard let outputCount = Self.decodedCount(unpadded: count), out.count >= outputCount else { return nil }
        let text = UnsafeBufferPointer(rebasing: input[..<count])
        let remainder = count % 4
        let table = switch alphabet {
        case .standard: Self.standardTable
        case .url: Self.urlTable
        case .standardOrURL: Self.eitherTable
        }
        return table.withUnsafeBufferPointer { table -> Int? in
            var input = 0
            var position = 0
            while input + 4 <= count {
                let a = table[Int(text[input])], b = table[Int(text[input + 1])]
                let c = table[Int(text[input + 2])], d = table[Int(text[input + 3])]
                if (a | b | c | d) & 0xC0 != 0 { return nil }
                out[position] = a << 2 | b >> 4
                out[position + 1] = b << 4 | c >> 2
                out[position + 2] = c << 6 | d
                input += 4
                position += 3
            }
            if remainder >= 2 {
                let a = table[Int(text[input])], b = table[Int(text[input + 1])]
                let c = remainder == 3 ? table[Int(text[input + 2])] : 0
                if (a | b | c) & 0xC0 != 0 { return nil }
                out[position] = a << 2 | b >> 4
                // Leftover bits must be zero, or two strings would decode the same.
                if remainder == 2 {
                    if b & 0x0F != 0 { return nil }
                } else {
                    out[position + 1] = b << 4 | c >> 2
                    if c & 0x03 != 0 { return nil }
                }
            }
            return outputCount
        }
    }
}
