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
        return prefix + "-" + String(next, radix: 16)
    }
}
