import Testing
@testable import Store

/// The PostgreSQL session cache's rules, without a database.
@Suite struct NotifiedSessionCacheTests {
    /// A user record as the database makes it (the type has no other public way in).
    static func makeUser() async throws -> UserRecord {
        try await withDatabase { database in
            let id = try await StoreTests.makeUser(database)
            return try #require(try await UserStore(database: database).user(id: id))
        }
    }

    func session(_ id: String, of user: UserRecord) -> SessionRecord {
        SessionRecord(id: id, userID: user.id, deviceName: nil, createdAt: 1, lastSeenAt: 1, expiresAt: 100)
    }

    @Test func nothingIsServedUntilTheListenerListens() async throws {
        let user = try await Self.makeUser()
        let cache = NotifiedSessionCache()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([1]) == nil)
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([1])?.0.id == "s1")
        // Notifications may be missed while disconnected: everything goes, and stays out.
        cache.listenerLost()
        #expect(cache.lookup([1]) == nil)
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        #expect(cache.count == 0)
    }

    @Test func notificationsDropTheSessionOrEverySessionOfTheUser() async throws {
        let user = try await Self.makeUser()
        let cache = NotifiedSessionCache()
        cache.listenerConnected()
        for (hash, id) in [([UInt8(1)], "s1"), ([2], "s2"), ([3], "s3")] {
            cache.store(hash, session: session(id, of: user), user: user, readAt: cache.generation)
        }
        cache.invalidate("s:s2")
        #expect(cache.lookup([2]) == nil)
        #expect(cache.lookup([1]) != nil)
        cache.invalidate("u:" + user.id)
        #expect(cache.count == 0)
    }

    @Test func aReadThatRacedAnInvalidationIsNotKept() async throws {
        let user = try await Self.makeUser()
        let cache = NotifiedSessionCache()
        cache.listenerConnected()
        let before = cache.generation
        cache.invalidate("s:s1")  // arrives while the read of s1 is in flight
        cache.store([1], session: session("s1", of: user), user: user, readAt: before)
        #expect(cache.lookup([1]) == nil)
    }
}
