import Synchronization

/// Request ids: the client's when it is safe to echo (docs/reference/http-api.md: 1–128 of `A-Za-z0-9._-`), else
/// a new one made from a per-process random prefix and a counter — unique, and cheap enough for
/// every request.
public enum RequestID {
    public static func isValid(_ candidate: String) -> Bool {
        let bytes = candidate.utf8
        guard (1...128).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2E, 0x5F, 0x2D: true
            default: false
            }
        }
    }

    private static let prefix: String = {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }()

    private static let counter = Atomic<UInt64>(0)

    public static func make() -> String {
        let next = counter.add(1, ordering: .relaxed).newValue
        // Written once into the string's own storage: joining three strings cost two growths
        // and a conversion on every request.
        let digits = max(1, (UInt64.bitWidth - next.leadingZeroBitCount + 3) / 4)
        return String(unsafeUninitializedCapacity: 17 + digits) { bytes in
            var prefix = prefix
            let count = prefix.withUTF8 { prefixBytes in
                _ = bytes.initialize(fromContentsOf: prefixBytes)
                return prefixBytes.count
            }
            bytes[count] = UInt8(ascii: "-")
            var value = next
            for position in stride(from: count + digits, to: count, by: -1) {
                let digit = UInt8(value & 0xF)
                bytes[position] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") - 10 + digit
                value >>= 4
            }
            return count + 1 + digits
        }
    }
}
