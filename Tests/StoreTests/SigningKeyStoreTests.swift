import Foundation
import OpenSSLCrypto
import Synchronization
import Testing
import TestSupport
import WireFormat
@testable import Store

/// The access-token signing keys (docs/guides/connecting-your-backend.md) on both engines: one current key however many
/// instances start or rotate together, the publication lead, a day in the JWKS after
/// retirement, and the private key sealed at rest.
@Suite(.timeLimit(.minutes(2)))
struct SigningKeyStoreTests {
    static let key = [UInt8](repeating: 0x42, count: 32)
    static let day = SigningKeyStore.retiredKeyLifetime

    /// A real P-256 key in PKCS#8 PEM, as the application stores it, under `kid`.
    static func newKey(_ kid: String) throws -> NewSigningKey {
        let pem = try P256PrivateKey.generate().pem()
        return NewSigningKey(kid: kid, privateKey: Array(pem.utf8), publicJWK: #"{"kid":"\#(kid)"}"#)
    }

    /// Four stores on one database, as four instances would have them.
    static func withInstances(_ engine: Engine, _ body: ([Store]) async throws -> Void) async throws {
        try await StoreTests.withLocation(engine) { location in
            let stores = try (0..<4).map { _ in try Store.open(location, connections: 1) { Self.key } }
            defer { stores.forEach { $0.close() } }
            try await body(stores)
        }
    }

    /// Runs `body` for every store at once; returns the kids made.
    static func race(_ stores: [Store], _ body: @escaping @Sendable (Store, Int) async throws -> String?) async throws -> [String] {
        try await withThrowingTaskGroup(of: String?.self) { group in
            for (index, store) in stores.enumerated() { group.addTask { try await body(store, index) } }
            return try await group.reduce(into: [String]()) { if let kid = $1 { $0.append(kid) } }
        }
    }

    static func withStore(_ engine: Engine, dataKey: [UInt8] = key, _ body: (Store) async throws -> Void) async throws {
        try await StoreTests.withLocation(engine) { location in
            let store = try Store.open(location, connections: 2) { dataKey }
            defer { store.close() }
            try await body(store)
        }
    }

    @Test(arguments: Engine.available)
    func theFirstKeyIsMadeOnceAndSignsAtOnce(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let keys = store.signingKeys
            #expect(try keys.ensureCurrentBlocking(now: 1_000) { try Self.newKey("k1") } == "k1")
            // Already current: nothing is made, and `make` is not even called.
            #expect(try keys.ensureCurrentBlocking(now: 1_001) { Issue.record("made a second key"); return try Self.newKey("k2") } == nil)

            let published = try await keys.published(now: 1_001)
            #expect(published.map(\.kid) == ["k1"])
            #expect(published[0].createdAt == 1_000 && published[0].retiredAt == nil)
            #expect(published[0].publicJWK == #"{"kid":"k1"}"#)
            // The private key comes back as it was given, and is a usable key.
            let pem = String(decoding: try #require(published[0].privateKey), as: UTF8.self)
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            _ = try P256PrivateKey(pem: pem)
            #expect(SigningKeyRecord.signing(among: published, at: 1_001)?.kid == "k1")
            #expect(try keys.publishedBlocking(now: 1_001) == published)
        }
    }

    /// Instances starting together on one database: each runs the start-up check on its own
    /// store (its own connections) at the same moment, and one key is made.
    @Test(arguments: Engine.available)
    func instancesStartingTogetherMakeOneKey(_ engine: Engine) async throws {
        try await Self.withInstances(engine) { stores in
            // Threads of their own, released together: the blocking start-up form must not
            // starve the cooperative pool.
            let start = StartLine(runners: stores.count)
            let made = try await Self.race(stores) { store, index in
                try await onOwnThread {
                    start.wait()
                    return try store.signingKeys.ensureCurrentBlocking(now: 1_000) { try Self.newKey("k\(index)") }
                }
            }
            #expect(made.count == 1, "made: \(made)")
            for store in stores {
                #expect(try await store.signingKeys.published(now: 1_000).map(\.kid) == made)
            }
        }
    }

    /// The new key is published at once but signs only from `activatesAt`; the replaced key
    /// signs until then, stays published for a day after, and housekeeping deletes it.
    @Test(arguments: Engine.available)
    func aRotationPublishesFirstSignsLaterAndKeepsTheOldKeyADay(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let keys = store.signingKeys
            try keys.ensureCurrentBlocking(now: 1_000) { try Self.newKey("old") }
            #expect(try await keys.rotate(now: 2_000, activatesAt: 2_330) { try Self.newKey("new") } == "new")

            let published = try await keys.published(now: 2_000)
            #expect(published.map(\.kid) == ["old", "new"])
            #expect(published.first { $0.kid == "old" }?.retiredAt == 2_330)
            #expect(published.first { $0.kid == "new" }?.retiredAt == nil)
            #expect(SigningKeyRecord.signing(among: published, at: 2_000)?.kid == "old")
            #expect(SigningKeyRecord.signing(among: published, at: 2_329)?.kid == "old")
            #expect(SigningKeyRecord.signing(among: published, at: 2_330)?.kid == "new")

            // A day after it stopped signing, the old key leaves the set; then housekeeping
            // deletes its row.
            #expect(try await keys.published(now: 2_330 + Self.day - 1).map(\.kid) == ["old", "new"])
            #expect(try await keys.published(now: 2_330 + Self.day).map(\.kid) == ["new"])
            #expect(try await store.pruneExpired(now: 2_330 + Self.day - 1, idleTTL: 3_600) == 0)
            #expect(try await store.pruneExpired(now: 2_330 + Self.day, idleTTL: 3_600) == 1)
            let rows = try await store.engine.read { try $0.query("SELECT kid FROM signing_keys").map { try $0.string(0) } }
            #expect(rows == ["new"])
        }
    }

    /// A first key, then rotations (`now`, `activatesAt`), and which key signs when.
    struct RotationScenario: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let first: (kid: String, at: Int64)
        let rotations: [(kid: String, now: Int64, activatesAt: Int64)]
        let signing: [(at: Int64, kid: String)]

        static let all: [RotationScenario] = [
            // Rotating again before the lead ends: each key signs in turn.
            RotationScenario(
                testDescription: "again before the lead ends", first: ("a", 1_000), rotations: [("b", 2_000, 2_300), ("c", 2_100, 2_400)],
                signing: [(2_299, "a"), (2_300, "b"), (2_400, "c")]),
            // `rotate-signing-key` in the second the first key was made: the new kid sorts
            // first, and still the old key signs until the lead ends.
            RotationScenario(
                testDescription: "in the second of the key it replaces", first: ("z-old", 1_000), rotations: [("a-new", 1_000, 1_330)],
                signing: [(1_000, "z-old"), (1_329, "z-old"), (1_330, "a-new")]),
            // From a clock behind the last rotation's (another host): the later retirement
            // stands, so b never signs early and the order never goes back.
            RotationScenario(
                testDescription: "from a clock running behind", first: ("a", 1_000), rotations: [("b", 2_000, 2_330), ("c", 1_900, 2_230)],
                signing: [(2_000, "a"), (2_229, "a"), (2_329, "a"), (2_330, "c")]),
        ]
    }

    /// A key signs only once the one before it has retired: never before its lead, whatever
    /// the kids' order or the clocks of the callers that rotate.
    @Test(arguments: Engine.available, RotationScenario.all)
    func eachKeySignsOnlyOnceTheOneBeforeItRetires(_ engine: Engine, _ scenario: RotationScenario) async throws {
        try await Self.withStore(engine) { store in
            let keys = store.signingKeys
            try keys.ensureCurrentBlocking(now: scenario.first.at) { try Self.newKey(scenario.first.kid) }
            for rotation in scenario.rotations {
                try await keys.rotate(now: rotation.now, activatesAt: rotation.activatesAt) { try Self.newKey(rotation.kid) }
            }
            let published = try await keys.published(now: scenario.rotations.map(\.now).max() ?? scenario.first.at)
            #expect(Set(published.map(\.kid)) == Set([scenario.first.kid] + scenario.rotations.map(\.kid)))
            for (at, kid) in scenario.signing {
                #expect(SigningKeyRecord.signing(among: published, at: at)?.kid == kid, "at \(at)")
            }
        }
    }

    /// The periodic check: nothing before the newest key is due, and once it is due, instances
    /// checking together rotate once.
    @Test(arguments: Engine.available)
    func aDueRotationHappensOnceWhoeverChecks(_ engine: Engine) async throws {
        try await Self.withInstances(engine) { stores in
            try stores[0].signingKeys.ensureCurrentBlocking(now: 1_000) { try Self.newKey("first") }
            let rotation: Int64 = 30 * 86_400
            let early = 1_000 + rotation - 1
            #expect(try await stores[1].signingKeys.rotate(now: early, activatesAt: early + 330, ifNewestCreatedAtOrBefore: early - rotation) {
                try Self.newKey("too-early")
            } == nil)

            let due = 1_000 + rotation
            let made = try await Self.race(stores) { store, index in
                try await store.signingKeys.rotate(now: due, activatesAt: due + 330, ifNewestCreatedAtOrBefore: due - rotation) {
                    try Self.newKey("second-\(index)")
                }
            }
            #expect(made.count == 1, "made: \(made)")
            let published = try await stores[0].signingKeys.published(now: due)
            #expect(published.map(\.kid) == ["first"] + made)
            #expect(published.filter { $0.retiredAt == nil }.count == 1)
        }
    }

    /// `rotate-signing-key` (docs/guides/connecting-your-backend.md): the new key signs at once, even over a scheduled
    /// rotation still in its lead; every key it replaces stays published a day.
    @Test(arguments: Engine.available)
    func theCommandsKeySignsAtOnceAndTheKeysItReplacesStayADay(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let keys = store.signingKeys
            // On an empty database the command's key is the only one.
            #expect(try keys.replaceNowBlocking(now: 1_000, removingOlder: false) { try Self.newKey("one") } == ("one", []))
            // A scheduled rotation: "two" is published, "one" signs until 1_430.
            try await keys.rotate(now: 1_100, activatesAt: 1_430) { try Self.newKey("two") }
            #expect(try keys.replaceNowBlocking(now: 1_200, removingOlder: false) { try Self.newKey("three") } == ("three", ["one", "two"]))
            let published = try keys.publishedBlocking(now: 1_200)
            #expect(published.map(\.kid) == ["one", "two", "three"])
            #expect(published.filter { $0.kid != "three" }.allSatisfy { $0.retiredAt == 1_200 })
            #expect(SigningKeyRecord.signing(among: published, at: 1_200)?.kid == "three")
            #expect(SigningKeyRecord.signing(among: published, at: 1_430)?.kid == "three")
            #expect(try keys.publishedBlocking(now: 1_200 + Self.day - 1).map(\.kid) == ["one", "two", "three"])
            #expect(try keys.publishedBlocking(now: 1_200 + Self.day).map(\.kid) == ["three"])
        }
    }

    /// `rotate-signing-key --retire-old`: every other key, signing or retired, leaves the set at
    /// once (a key that leaked), and the new one signs.
    @Test(arguments: Engine.available)
    func retiringTheOldKeysRemovesEveryOtherKeyAtOnce(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let keys = store.signingKeys
            try keys.ensureCurrentBlocking(now: 1_000) { try Self.newKey("one") }
            try await keys.rotate(now: 1_100, activatesAt: 1_430) { try Self.newKey("two") }
            #expect(try keys.replaceNowBlocking(now: 1_200, removingOlder: true) { try Self.newKey("three") } == ("three", ["one", "two"]))
            let published = try keys.publishedBlocking(now: 1_200)
            #expect(published.map(\.kid) == ["three"])
            #expect(SigningKeyRecord.signing(among: published, at: 1_200)?.kid == "three")
            let rows = try await store.engine.read { try $0.query("SELECT kid FROM signing_keys").map { try $0.string(0) } }
            #expect(rows == ["three"])
        }
    }

    /// At rest the private key is sealed: the row holds neither its PEM nor its DER body, and
    /// it opens only with the same `data_key` and under its own kid.
    @Test(arguments: Engine.available)
    func thePrivateKeyIsSealedAndBoundToItsKid(_ engine: Engine) async throws {
        try await StoreTests.withLocation(engine) { location in
            let store = try Store.open(location, connections: 1) { Self.key }
            let first = try Self.newKey("k1")
            try store.signingKeys.ensureCurrentBlocking(now: 1_000) { first }
            try await store.signingKeys.rotate(now: 2_000, activatesAt: 2_330) { try Self.newKey("k2") }
            let sealed = try await store.engine.read { connection in
                try #require(try connection.queryOne("SELECT private_key FROM signing_keys WHERE kid = 'k1'")).blob(0)
            }
            let pem = String(decoding: first.privateKey, as: UTF8.self)
            let der = try #require(Base64.standard.decode(pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()))
            #expect(!String(decoding: sealed, as: UTF8.self).contains("PRIVATE KEY"))
            // ECPrivateKey holds the scalar as an OCTET STRING of 32 bytes (04 20 …).
            let octetString: Int? = (0..<(der.count - 34)).first { der[$0] == 0x04 && der[$0 + 1] == 0x20 }
            let scalarAt = try #require(octetString) + 2
            #expect(!Self.contains(sealed, der[scalarAt..<(scalarAt + 32)]), "the private scalar is in the row")
            #expect(!Self.contains(sealed, Array(pem.utf8.dropFirst(28).prefix(32))), "the PEM's base64 is in the row")
            #expect(sealed.count == 12 + first.privateKey.count + 16)

            // Sealed under k1, the value copied to k2 does not open there.
            try await store.engine.write { connection in
                try connection.run("UPDATE signing_keys SET private_key = ? WHERE kid = 'k2'", [.blob(sealed)])
            }
            let swapped = try await store.signingKeys.published(now: 2_000)
            #expect(swapped.first { $0.kid == "k1" }?.privateKey == first.privateKey)
            #expect(swapped.first { $0.kid == "k2" }?.privateKey == nil)
            store.close()

            // Another data_key opens nothing, but the keys are still listed (their public
            // halves still verify the tokens they signed).
            let other = try Store.open(location, connections: 1) { [UInt8](repeating: 0x43, count: 32) }
            defer { other.close() }
            let foreign = try await other.signingKeys.published(now: 2_000)
            #expect(foreign.map(\.kid) == ["k1", "k2"])
            #expect(foreign.allSatisfy { $0.privateKey == nil })
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: some Collection<UInt8>) -> Bool {
        let needle = Array(needle)
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
