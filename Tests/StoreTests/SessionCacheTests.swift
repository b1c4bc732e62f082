import Foundation
import PostgreSQL
@testable import Store
import Synchronization
import Testing
import TestSupport

/// The store's session cache (SQLite: checked against the engine's change tracker;
/// PostgreSQL: dropped on NOTIFY): repeated authentication is served from memory, and every
/// change to the session or its user, by any write path, is seen by the very next call.
@Suite struct SessionCacheTests {
    @Test(arguments: Engine.available)
    func aSecondAuthenticationIsServedFromMemory(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            try await cacheReady(store)
            let userID = try await makeUser(store)
            let sessions = store.sessions
            let session = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            #expect(sessions.cachedCount == 0)
            await #expect(try sessions.authenticate(token: session.token, now: 1_001, idleTTL: 600) != nil)
            #expect(sessions.cachedCount == 1)
            await #expect(try sessions.authenticate(token: session.token, now: 1_002, idleTTL: 600)?.0 == session.record)
            // Unknown tokens are never cached (they cost a read each, as before).
            _ = try await sessions.authenticate(token: encodeBase64URL([UInt8](repeating: 7, count: 32)), now: 1_002, idleTTL: 600)
            #expect(sessions.cachedCount == 1)
        }
    }

    @Test(arguments: Engine.available)
    func expiryAndIdlenessAreCheckedOnEveryHit(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            try await cacheReady(store)
            let userID = try await makeUser(store)
            let sessions = store.sessions
            let session = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            await #expect(try sessions.authenticate(token: session.token, now: 1_001, idleTTL: 600) != nil)
            #expect(sessions.cachedCount == 1, "the checks below are of a cached entry")
            await #expect(try sessions.authenticate(token: session.token, now: 1_600, idleTTL: 600) == nil)
            await #expect(try sessions.authenticate(token: session.token, now: 4_600, idleTTL: 100_000) == nil)
        }
    }

    @Test(arguments: Engine.available)
    func endingTheSessionAnywhereIsSeenAtOnce(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            try await cacheReady(store)
            let userID = try await makeUser(store)
            let cached = store.sessions
            let other = store.uncachedSessions
            let first = try await cached.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let second = try await cached.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            await #expect(try cached.authenticate(token: first.token, now: 1_001, idleTTL: 600) != nil)
            await #expect(try cached.authenticate(token: second.token, now: 1_001, idleTTL: 600) != nil)
            #expect(cached.cachedCount == 2)
            #expect(try await other.end(id: first.record.id, userID: userID))
            await #expect(try cached.authenticate(token: first.token, now: 1_002, idleTTL: 600) == nil)
            // Deleting the user removes its sessions by cascade; the user row's change is enough.
            #expect(try await store.users.delete(userID: userID))
            await #expect(try cached.authenticate(token: second.token, now: 1_002, idleTTL: 600) == nil)
        }
    }

    /// An ended session's token is never looked up again, so its entry must not wait for one:
    /// a logout frees it at once, and the sweep frees those ended some other way. (SQLite's
    /// cache: PostgreSQL's drops an entry when the change is announced, with no sweep.)
    @Test func endedSessionsLeaveTheCache() async throws {
        try await withStore(.sqlite) { store in
            let userID = try await makeUser(store)
            let sessions = store.sessions
            let first = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let second = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let third = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            for session in [first, second, third] { _ = try await sessions.authenticate(token: session.token, now: 1_001, idleTTL: 600) }
            #expect(sessions.cachedCount == 3)

            #expect(try await sessions.end(id: first.record.id, userID: userID))
            #expect(sessions.cachedCount == 2)

            try await sessions.endAll(userID: userID, except: third.record.id)
            #expect(sessions.cachedCount == 2, "ended elsewhere: unusable at once, freed by the sweep")
            #expect(sessions.sweepCache() == 1)
            #expect(sessions.cachedCount == 1)
            await #expect(try sessions.authenticate(token: third.token, now: 1_002, idleTTL: 600) != nil)
        }
    }

    @Test(arguments: Engine.available)
    func aChangedUserIsReadAfresh(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            try await cacheReady(store)
            let userID = try await makeUser(store, sub: "sub-1")
            let sessions = store.sessions
            let session = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            await #expect(try sessions.authenticate(token: session.token, now: 1_001, idleTTL: 600)?.1.emailForwarding == nil)
            try await store.engine.write { connection in
                _ = try connection.run("UPDATE users SET email = 'a@privaterelay.appleid.com', is_private_email = 1, email_forwarding = 'enabled' WHERE id = ?", [.text(userID)])
            }
            #expect(try await store.users.setEmailForwarding(appleSub: "sub-1", enabled: false, now: 1_002))
            await #expect(try sessions.authenticate(token: session.token, now: 1_003, idleTTL: 600)?.1.emailForwarding == .disabled)
        }
    }

    /// PostgreSQL: a write's marker rides in its COMMIT. A COMMIT that fails (here a deferred
    /// constraint, checked only at COMMIT) sends no marker, so the cache forgets everything
    /// instead of waiting for one for good, and serves from memory again.
    @Test(.enabled(if: Engine.available.contains(.postgres), "PostgreSQL is not installed"))
    func aCommitThatFailsLeavesTheCacheServing() async throws {
        try await withStore(.postgres) { store in
            try await cacheReady(store)
            guard let cache = store.sessions.caching as? NotifiedSessionCache else { throw CacheNotListening() }
            try await store.engine.write {
                _ = try $0.run("CREATE TABLE deferred_check(x integer UNIQUE DEFERRABLE INITIALLY DEFERRED)")
            }
            let userID = try await makeUser(store)
            let session = try await store.sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let hash = try #require(TokenHash(token: Substring(session.token), decodedCount: 32))
            _ = try await store.sessions.authenticate(token: session.token, now: 1_001, idleTTL: 600)
            #expect(cache.lookup(hash) != nil)

            await #expect(throws: (any Error).self) {
                try await store.engine.write { connection in
                    _ = try connection.run("INSERT INTO deferred_check VALUES (1), (1)")
                }
            }
            #expect(cache.count == 0, "a COMMIT whose outcome is an error: everything goes")
            _ = try await store.sessions.authenticate(token: session.token, now: 1_002, idleTTL: 600)
            #expect(cache.lookup(hash) != nil, "serving again, not waiting for a marker")
        }
    }

    /// PostgreSQL announces every change to a session row but one: last_seen_at alone (the
    /// last-seen batcher's once-a-second write) leaves every instance's cached copy in place.
    @Test(.enabled(if: Engine.available.contains(.postgres), "PostgreSQL is not installed"))
    func onlyALastSeenChangeIsNotAnnounced() async throws {
        try await withStore(.postgres) { store in
            try await cacheReady(store)
            guard let cache = store.sessions.caching as? NotifiedSessionCache else { throw CacheNotListening() }
            let userID = try await makeUser(store)
            let session = try await store.sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let hash = try #require(TokenHash(token: Substring(session.token), decodedCount: 32))
            /// Waits until the write's marker is heard (serving again) or the entry is gone.
            func kept() async throws -> Bool {
                _ = try await eventually { cache.lookup(hash) != nil || cache.count == 0 }
                return cache.lookup(hash) != nil
            }
            _ = try await store.sessions.authenticate(token: session.token, now: 1_001, idleTTL: 600)
            #expect(cache.lookup(hash) != nil)

            try await store.engine.write { _ = try $0.run("UPDATE sessions SET last_seen_at = 1500 WHERE id = ?", [.text(session.record.id)]) }
            #expect(try await kept(), "a last-seen change is not announced")
            try await store.engine.write { _ = try $0.run("UPDATE sessions SET expires_at = 4000 WHERE id = ?", [.text(session.record.id)]) }
            #expect(try await !kept(), "any other change is")
        }
    }

    /// PostgreSQL: a write that changes no row the database announces (a worker's claim that
    /// found nothing due, a batch of last-seen times) sends no marker with its COMMIT, so the
    /// cache serves on at once instead of sending every read to the database until a marker
    /// is heard; a write that does change a session still sends one, after its change.
    @Test(.enabled(if: Engine.available.contains(.postgres), "PostgreSQL is not installed"))
    func aWriteThatAnnouncesNothingSendsNoMarker() async throws {
        try await withStore(.postgres) { store in
            try await cacheReady(store)
            guard let cache = store.sessions.caching as? NotifiedSessionCache, let url = (store.engine as? PostgresEngine)?.url else {
                throw CacheNotListening()
            }
            let heard = Mutex<(listening: Bool, payloads: [String])>((false, []))
            let listener = try PostgresListener(url, channels: [NotifiedSessionCache.channel]) { event in
                switch event {
                case .listening: heard.withLock { $0.listening = true }
                case .notification(let notification): heard.withLock { $0.payloads.append(notification.payload) }
                case .confirmed, .disconnected: break
                }
            }
            defer { listener.close() }
            let userID = try await makeUser(store)
            let session = try await store.sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let hash = try #require(TokenHash(token: Substring(session.token), decodedCount: 32))
            #expect(try await eventually { heard.withLock { $0.listening } })
            _ = try await store.sessions.authenticate(token: session.token, now: 1_001, idleTTL: 600)
            #expect(cache.lookup(hash) != nil)

            #expect(try await store.revocations.claimDue(now: 1_002, lease: 60).isEmpty)
            try await store.engine.write { try SessionStore.recordLastSeen([session.record.id: 1_003], in: $0) }
            try await store.engine.write { _ = try $0.run("UPDATE sessions SET expires_at = 4000 WHERE id = ?", [.text(session.record.id)]) }
            #expect(cache.lookup(hash) == nil, "a session's change is not served until heard")

            let probe = try PostgresConnection(url)
            defer { probe.close() }
            try probe.execute("NOTIFY \(NotifiedSessionCache.channel), 'x:end'")
            _ = try await eventually { heard.withLock { $0.payloads.last == "x:end" } }
            // The claim and the last-seen batch sent nothing; the session's change its own
            // notification, then one marker.
            let payloads = heard.withLock { $0.payloads }
            #expect(payloads.count == 3, "\(payloads)")
            #expect(payloads.first == "s:" + session.record.id)
            #expect(payloads.dropFirst().first?.hasPrefix("w:\(cache.instance):") == true, "one marker, after the change it covers")
        }
    }

    /// Readers race a writer that keeps changing the user; once a write has returned, no
    /// reader may see what was there before it.
    @Test(arguments: Engine.available)
    func noReadAfterAWriteSeesTheOldRow(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            try await cacheReady(store)
            let userID = try await makeUser(store, sub: "sub-race")
            let sessions = store.sessions
            let session = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 1_000_000)
            let stop = ManagedFlag()
            let readers = (0..<2).map { _ in
                // Yields each round: a task that never suspends would hold a thread of the small
                // cooperative pool and starve the writer's task.
                Task.detached {
                    while !stop.isSet {
                        _ = try? await sessions.authenticate(token: session.token, now: 1_001, idleTTL: 1_000_000)
                        await Task.yield()
                    }
                }
            }
            for round in 0..<300 {
                let name = "n\(round)"
                try await store.engine.write { _ = try $0.run("UPDATE users SET given_name = ? WHERE id = ?", [.text(name), .text(userID)]) }
                let seen = try await sessions.authenticate(token: session.token, now: 1_001, idleTTL: 1_000_000)?.1.givenName
                #expect(seen == name)
                if seen != name { break }
            }
            stop.set()
            for reader in readers { await reader.value }
        }
    }
}

final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
