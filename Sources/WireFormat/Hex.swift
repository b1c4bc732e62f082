/// Hexadecimal digits: lower-case for ids and digests (Apple's `sub`, nonce hashes), upper-case
/// for percent escapes (RFC 3986 §2.1 says producers should use it).
public enum Hex {
    @usableFromInline static let lowerDigits: [UInt8] = Array("0123456789abcdef".utf8)
    @usableFromInline static let upperDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        // One pass over contiguous bytes straight into the string's storage: ids are made on
        // every sign-in, and going element by element through the generic sequence cost more
        // than the random bytes themselves.
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(contiguous: $0, uppercase: uppercase) }) { return encoded }
        return Array(bytes).withUnsafeBufferPointer { encode(contiguous: $0, uppercase: uppercase) }
    }

    private static func encode(contiguous bytes: UnsafeBufferPointer<UInt8>, uppercase: Bool) -> String {
        (uppercase ? upperDigits : lowerDigits).withUnsafeBufferPointer { digits in
            String(unsafeUninitializedCapacity: bytes.count * 2) { output in
                for (index, byte) in bytes.enumerated() {
                    output[2 * index] = digits[Int(byte >> 4)]
                    output[2 * index + 1] = digits[Int(byte & 0x0F)]
                }
                return bytes.count * 2
            }
        }
    }

    /// Appends the two digits of `byte`.
    @inlinable
    public static func append(_ byte: UInt8, to output: inout [UInt8], uppercase: Bool = false) {
        let digits = uppercase ? upperDigits : lowerDigits
        output.append(digits[Int(byte >> 4)])
        output.append(digits[Int(byte & 0x0F)])
    }

    /// The value of one digit of either case, or nil for any other byte.
    @inlinable
    public static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }
}
