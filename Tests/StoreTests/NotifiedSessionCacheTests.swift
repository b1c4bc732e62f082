import Testing
@testable import Store

/// The PostgreSQL session cache's rules, without a database.
@Suite struct NotifiedSessionCacheTests {
    /// A user record as the database makes it (the type has no other public way in).
    static func makeUser() async throws -> UserRecord {
        try await withStore(.sqlite) { store in
            let id = try await StoreTests.makeUser(store)
            return try #require(try await store.users.user(id: id))
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
        #expect(cache.lookup([1])?.session.id == "s1")
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
        for (hash, id) in [([1] as TokenHash, "s1"), ([2], "s2"), ([3], "s3")] {
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

    /// This instance's write is committing, and the listener has not heard its notifications
    /// yet: nothing is served from memory until its marker, which follows them, is heard.
    @Test func aCommittingWriteSuspendsServingUntilItsMarkerIsHeard() async throws {
        let user = try await Self.makeUser()
        let cache = NotifiedSessionCache()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        let marker = try #require(cache.markerForCommit())
        #expect(cache.lookup([1]) == nil)
        // Another instance's marker says nothing about this instance's write.
        cache.invalidate("w:" + RecordID.make(prefix: "") + ":1")
        #expect(cache.lookup([1]) == nil)
        cache.invalidate("s:s1")  // the write's own change, heard before its marker
        cache.store([2], session: session("s2", of: user), user: user, readAt: cache.generation)
        cache.committed(with: marker)
        cache.invalidate(marker.payload)
        #expect(cache.lookup([1]) == nil)
        #expect(cache.lookup([2])?.session.id == "s2")
    }

    /// A write registers its marker, and while its COMMIT runs another write that found nothing
    /// cached clears the cache, forgetting the marker; a read then stores the row as it was
    /// before the first write. When that first write's COMMIT returns, the stale copy must go.
    @Test func aMarkerForgottenWhileItsCommitRanClearsAgainAfterIt() async throws {
        let user = try await Self.makeUser()
        let cache = NotifiedSessionCache()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        let first = try #require(cache.markerForCommit())
        cache.invalidate("s:s1")  // another instance's change empties the cache
        #expect(cache.markerForCommit() == nil)
        cache.forgetAll()  // the second write: its clear forgets the first's marker
        cache.store([2], session: session("s2", of: user), user: user, readAt: cache.generation)  // read before the first commit applied
        cache.committed(with: first)
        #expect(cache.lookup([2]) == nil, "the copy read before the first write committed is not served after it returned")
        cache.store([2], session: session("s2", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([2]) != nil, "and serving goes on")
    }

    /// A marker heard (or merely outstanding) when its COMMIT returns changes nothing more.
    @Test func aMarkerStillKnownAfterItsCommitLeavesTheCacheAlone() async throws {
        let user = try await Self.makeUser()
        let cache = NotifiedSessionCache()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        let marker = try #require(cache.markerForCommit())
        cache.invalidate(marker.payload)
        cache.committed(with: marker)
        #expect(cache.lookup([1]) != nil)
    }

    /// With nothing held there is no marker to wait for: instead a read that began before the
    /// commit (and may hold what the write changed) is not kept, and one stored while the
    /// write committed goes.
    @Test func aWriteWithNothingCachedRefusesTheReadsBeforeIt() async throws {
        let user = try await Self.makeUser()
        let cache = NotifiedSessionCache()
        cache.listenerConnected()
        let before = cache.generation
        #expect(cache.markerForCommit() == nil)
        cache.store([0], session: session("s0", of: user), user: user, readAt: before)
        #expect(cache.lookup([0]) != nil, "stored while the write commits: its COMMIT has not returned yet")
        cache.forgetAll()
        #expect(cache.lookup([0]) == nil)
        cache.store([1], session: session("s1", of: user), user: user, readAt: before)
        #expect(cache.count == 0)
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([1]) != nil)
    }

    /// A marker that will never be heard (the listener reconnected, or the COMMIT failed)
    /// leaves the cache empty and serving again, not suspended for good.
    @Test func anUnheardMarkerIsForgottenWithEverything() async throws {
        let user = try await Self.makeUser()
        let cache = NotifiedSessionCache()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        _ = try #require(cache.markerForCommit())
        cache.forgetAll()
        #expect(cache.count == 0)
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([1]) != nil)

        _ = try #require(cache.markerForCommit())
        cache.listenerLost()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([1]) != nil)
    }
}
