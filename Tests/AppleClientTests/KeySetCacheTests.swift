import TestSupport
import AppleSimulator
import HTTPClient
import JOSE
import Synchronization
import Glibc
import Testing
@testable import AppleClient

final class MemoryKeySetStore: KeySetPersistence {
    private let stored = Mutex<[UInt8]?>(nil)
    init(_ document: [UInt8]? = nil) { stored.withLock { $0 = document } }
    var document: [UInt8]? { stored.withLock { $0 } }
    func loadKeySet() -> [UInt8]? { document }
    func saveKeySet(_ document: [UInt8]) async { stored.withLock { $0 = document } }
}

@Suite struct KeySetCacheTests {
    private func keysCalls(_ simulator: AppleIDSimulator) -> Int {
        simulator.calls.filter { $0.endpoint == "keys" }.count
    }

    @Test func loadsAppleKeysAndPersistsThem() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let store = MemoryKeySetStore()
        let cache = KeySetCache(url: simulator.baseURL + "/auth/keys", http: try HTTPClient(), persistence: store, monotonic: HeldClock(monotonic: 1000).readMonotonic)
        #expect(!cache.isLoaded)
        #expect(await cache.load())
        #expect(cache.source == .fetched)
        #expect(Set(cache.keyIDs) == Set(simulator.keyIDs))
        #expect(store.document != nil)
        await simulator.stop()
    }

    @Test func rotationIsPickedUpAndRetiredKeysStopBeingAccepted() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let clock = HeldClock(monotonic: 1000)
        let cache = KeySetCache(url: simulator.baseURL + "/auth/keys", http: try HTTPClient(), persistence: nil, monotonic: clock.readMonotonic)
        await cache.load()
        let original = simulator.keyIDs
        for _ in 0..<3 { _ = try simulator.rotateKeys() }
        let newest = try #require(simulator.keyIDs.last)
        #expect(cache.key(newest) == nil)
        // A token signed with the new key names an unknown kid: one refetch finds it.
        #expect(await cache.keyRefetchingIfUnknown(newest) != nil)
        for retired in original where !simulator.keyIDs.contains(retired) {
            #expect(cache.key(retired) == nil)
        }
        await simulator.stop()
    }

    @Test func verifyRefetchesOnceForATokenSignedWithANewKey() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let cache = KeySetCache(url: simulator.baseURL + "/auth/keys", http: try HTTPClient(), persistence: nil, monotonic: HeldClock(monotonic: 1000).readMonotonic)
        await cache.load()
        _ = try simulator.rotateKeys()
        let token = try simulator.issueCode(sub: "000001.00000000000000000000000000000003.0003", clientID: "com.example.app").identityToken
        let policy = TokenVerifier.Policy(kind: .identityToken, audiences: ["com.example.app"])
        let verified = try await cache.verify(token, policy: policy, now: Int64(Glibc.time(nil)))
        #expect(verified.keyID == simulator.keyIDs.last)
        #expect(keysCalls(simulator) == 2)
        // A second token with the same key needs no fetch.
        let next = try simulator.issueCode(sub: "000001.00000000000000000000000000000003.0003", clientID: "com.example.app").identityToken
        _ = try await cache.verify(next, policy: policy, now: Int64(Glibc.time(nil)))
        #expect(keysCalls(simulator) == 2)
        await simulator.stop()
    }

    @Test func aFloodOfUnknownKidsCostsOneFetchPerMinute() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let clock = HeldClock(monotonic: 1000)
        let cache = KeySetCache(url: simulator.baseURL + "/auth/keys", http: try HTTPClient(), persistence: nil, monotonic: clock.readMonotonic)
        await cache.load()
        let afterStart = keysCalls(simulator)
        #expect(afterStart == 1)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask { _ = await cache.keyRefetchingIfUnknown("random-\(index)") }
            }
        }
        // The start-up fetch does not use up the allowance: exactly one more.
        #expect(keysCalls(simulator) == afterStart + 1)
        clock.advanceMonotonic(by: 30)
        _ = await cache.keyRefetchingIfUnknown("still-unknown")
        #expect(keysCalls(simulator) == afterStart + 1)
        clock.advanceMonotonic(by: 31)
        _ = await cache.keyRefetchingIfUnknown("still-unknown")
        #expect(keysCalls(simulator) == afterStart + 2)
        await simulator.stop()
    }

    @Test func persistedKeysServeWhileTheKeysEndpointIsDown() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let store = MemoryKeySetStore()
        let first = KeySetCache(url: simulator.baseURL + "/auth/keys", http: try HTTPClient(), persistence: store, monotonic: HeldClock(monotonic: 1000).readMonotonic)
        await first.load()

        simulator.injectFault(SimulatorFault(endpoint: .keys, status: 503, count: 100))
        let second = KeySetCache(url: simulator.baseURL + "/auth/keys", http: try HTTPClient(), persistence: store, monotonic: HeldClock(monotonic: 1000).readMonotonic)
        #expect(await second.load() == false)
        #expect(second.isLoaded)
        #expect(second.source == .persisted)
        let token = try simulator.issueCode(sub: "000001.00000000000000000000000000000001.0001", clientID: "com.example.app").identityToken
        let verified = try TokenVerifier.verify(
            token, keys: { second.key($0) }, policy: .init(kind: .identityToken, audiences: ["com.example.app"]),
            now: Int64(Glibc.time(nil)))
        #expect(verified.claims.subject == "000001.00000000000000000000000000000001.0001")
        await simulator.stop()
    }

    @Test func garbageFromTheKeysEndpointDoesNotReplaceGoodKeys() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let clock = HeldClock(monotonic: 1000)
        let cache = KeySetCache(url: simulator.baseURL + "/auth/keys", http: try HTTPClient(), persistence: nil, monotonic: clock.readMonotonic)
        await cache.load()
        let before = cache.keyIDs
        simulator.injectFault(SimulatorFault(endpoint: .keys, status: 200, body: .garbage))
        #expect(await cache.refresh() == false)
        #expect(cache.keyIDs == before)
        await simulator.stop()
    }
}
