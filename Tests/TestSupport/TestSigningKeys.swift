import AppleSimulator
import OpenSSLCrypto
import Synchronization

/// RSA-2048 keys shared by every test in the process. Generating one costs about a tenth of a
/// second of CPU; hundreds of simulators each generating their own made key generation 80% of
/// the suite's CPU, enough to push timeouts on a two-core machine.
public enum TestSigningKeys {
    /// More than any one simulator publishes or a test holds at once, so the keys a caller
    /// draws in a row are distinct.
    static let poolSize = 8
    private static let slots = (0..<poolSize).map { _ in Slot() }
    private static let cursor = Atomic<Int>(0)

    /// `count` keys that differ from each other.
    public static func distinct(_ count: Int) throws -> [RSAPrivateKey] {
        precondition(count <= poolSize, "the pool holds \(poolSize) keys")
        let start = cursor.wrappingAdd(count, ordering: .relaxed).oldValue
        return try (0..<count).map { try key(at: start + $0) }
    }

    public static func one() throws -> RSAPrivateKey { try distinct(1)[0] }

    /// A source for one simulator: consecutive keys, so those it publishes are distinct.
    public static func source() -> @Sendable () throws -> RSAPrivateKey {
        let start = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        let drawn = DrawCount()
        return { try key(at: start + drawn.next()) }
    }

    private final class Slot: Sendable {
        let key = Mutex<RSAPrivateKey?>(nil)
    }

    private final class DrawCount: Sendable {
        private let count = Atomic<Int>(0)
        func next() -> Int { count.wrappingAdd(1, ordering: .relaxed).oldValue }
    }

    private static func key(at index: Int) throws -> RSAPrivateKey {
        try slots[index % poolSize].key.withLock { slot in
            if let key = slot { return key }
            let key = try RSAPrivateKey.generate(bits: 2048)
            slot = key
            return key
        }
    }
}

extension SimulatorConfiguration {
    /// The defaults, with signing keys from the shared test pool.
    public static func testing() -> SimulatorConfiguration {
        var configuration = SimulatorConfiguration()
        configuration.makeSigningKey = TestSigningKeys.source()
        return configuration
    }
}
