import Foundation
import SQLite
@testable import Store
import Testing

/// `SessionStore(caching: true)`: repeated authentication is served from memory, and every
/// change to the session or its user, by any write path, is seen by the very next call.
@Suite struct SessionCacheTests {
    @Test func aSecondAuthenticationIsServedFromMemory() async throws {
        try await withDatabase { database in
            let userID = try await makeUser(database)
            let store = SessionStore(database: database, caching: true)
            let session = try await store.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            #expect(store.cachedCount == 0)
            await #expect(try store.authenticate(token: session.token, now: 1_001, idleTTL: 600) != nil)
            #expect(store.cachedCount == 1)
            await #expect(try store.authenticate(token: session.token, now: 1_002, idleTTL: 600)?.0 == session.record)
            // Unknown tokens are never cached (they cost a read each, as before).
            _ = try await store.authenticate(token: encodeBase64URL([UInt8](repeating: 7, count: 32)), now: 1_002, idleTTL: 600)
            #expect(store.cachedCount == 1)
        }
    }

    @Test func expiryAndIdlenessAreCheckedOnEveryHit() async throws {
        try await withDatabase { database in
            let userID = try await makeUser(database)
            let store = SessionStore(database: database, caching: true)
            let session = try await store.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            await #expect(try store.authenticate(token: session.token, now: 1_001, idleTTL: 600) != nil)
            await #expect(try store.authenticate(token: session.token, now: 1_600, idleTTL: 600) == nil)
            await #expect(try store.authenticate(token: session.token, now: 4_600, idleTTL: 100_000) == nil)
        }
    }

    @Test func endingTheSessionAnywhereIsSeenAtOnce() async throws {
        try await withDatabase { database in
            let userID = try await makeUser(database)
            let cached = SessionStore(database: database, caching: true)
            let other = SessionStore(database: database)
            let first = try await cached.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let second = try await cached.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            await #expect(try cached.authenticate(token: first.token, now: 1_001, idleTTL: 600) != nil)
            await #expect(try cached.authenticate(token: second.token, now: 1_001, idleTTL: 600) != nil)
            #expect(try await other.end(id: first.record.id, userID: userID))
            await #expect(try cached.authenticate(token: first.token, now: 1_002, idleTTL: 600) == nil)
            // Deleting the user removes its sessions by cascade; the user row's change is enough.
            #expect(try await UserStore(database: database).delete(userID: userID))
            await #expect(try cached.authenticate(token: second.token, now: 1_002, idleTTL: 600) == nil)
        }
    }

    /// An ended session's token is never looked up again, so its entry must not wait for one:
    /// a logout frees it at once, and the sweep frees those ended some other way.
    @Test func endedSessionsLeaveTheCache() async throws {
        try await withDatabase { database in
            let userID = try await makeUser(database)
            let store = SessionStore(database: database, caching: true)
            let first = try await store.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let second = try await store.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            let third = try await store.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            for session in [first, second, third] { _ = try await store.authenticate(token: session.token, now: 1_001, idleTTL: 600) }
            #expect(store.cachedCount == 3)

            #expect(try await store.end(id: first.record.id, userID: userID))
            #expect(store.cachedCount == 2)

            try await store.endAll(userID: userID, except: third.record.id)
            #expect(store.cachedCount == 2, "ended elsewhere: unusable at once, freed by the sweep")
            #expect(store.sweepCache() == 1)
            #expect(store.cachedCount == 1)
            await #expect(try store.authenticate(token: third.token, now: 1_002, idleTTL: 600) != nil)
        }
    }

    @Test func aChangedUserIsReadAfresh() async throws {
        try await withDatabase { database in
            let userID = try await makeUser(database, sub: "sub-1")
            let store = SessionStore(database: database, caching: true)
            let session = try await store.create(userID: userID, deviceName: nil, now: 1_000, ttl: 3_600)
            await #expect(try store.authenticate(token: session.token, now: 1_001, idleTTL: 600)?.1.emailForwarding == nil)
            try await database.write { connection in
                _ = try connection.run("UPDATE users SET email = 'a@privaterelay.appleid.com', is_private_email = 1, email_forwarding = 'enabled' WHERE id = ?", [.text(userID)])
            }
            #expect(try await UserStore(database: database).setEmailForwarding(appleSub: "sub-1", enabled: false, now: 1_002))
            await #expect(try store.authenticate(token: session.token, now: 1_003, idleTTL: 600)?.1.emailForwarding == .disabled)
        }
    }

    /// Readers race a writer that keeps changing the user; once a write has returned, no
    /// reader may see what was there before it.
    @Test func noReadAfterAWriteSeesTheOldRow() async throws {
        try await withDatabase { database in
            let userID = try await makeUser(database, sub: "sub-race")
            let store = SessionStore(database: database, caching: true)
            let session = try await store.create(userID: userID, deviceName: nil, now: 1_000, ttl: 1_000_000)
            let stop = ManagedFlag()
            let readers = (0..<2).map { _ in
                // Yields each round: a task that never suspends would hold a thread of the small
                // cooperative pool and starve the writer's task.
                Task.detached {
                    while !stop.isSet {
                        _ = try? await store.authenticate(token: session.token, now: 1_001, idleTTL: 1_000_000)
                        await Task.yield()
                    }
                }
            }
            for round in 0..<300 {
                let name = "n\(round)"
                try await database.write { _ = try $0.run("UPDATE users SET given_name = ? WHERE id = ?", [.text(name), .text(userID)]) }
                let seen = try await store.authenticate(token: session.token, now: 1_001, idleTTL: 1_000_000)?.1.givenName
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
