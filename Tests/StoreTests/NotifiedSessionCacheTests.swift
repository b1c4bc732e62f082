import Synchronization
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

    /// The cache's clock, moving only when told to.
    final class HeldClock: Sendable {
        private let time = Mutex(Duration.seconds(1_000))
        var now: NotifiedSessionCache.Clock { { self.time.withLock { $0 } } }
        func advance(by delta: Duration) { time.withLock { $0 += delta } }
    }

    /// A cache on a held clock, so that its listener's last confirmation never grows old while
    /// a test runs on a busy machine.
    func makeCache(_ clock: HeldClock = HeldClock()) -> NotifiedSessionCache {
        NotifiedSessionCache(now: clock.now)
    }

    @Test func nothingIsServedUntilTheListenerListens() async throws {
        let user = try await Self.makeUser()
        let cache = makeCache()
        // A listener that cannot connect at start stopped nothing: no outage is counted.
        cache.listenerLost()
        #expect(cache.outages == SessionCacheOutages())
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

    /// docs/guides/postgresql.md: the listener confirms its connection every 250 ms. Once its last
    /// confirmation is more than a second old (its server process stalled, the network
    /// half-open: notifications may be held up) nothing is served from memory; when it
    /// confirms again, or reconnects, the cache starts over, since what was stored meanwhile
    /// may have missed a notification.
    @Test func nothingIsServedOnceTheListenersConfirmationIsOverdue() async throws {
        let user = try await Self.makeUser()
        let clock = HeldClock()
        let cache = makeCache(clock)
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        clock.advance(by: .milliseconds(900))
        #expect(cache.lookup([1])?.session.id == "s1")
        cache.listenerConfirmed()
        clock.advance(by: NotifiedSessionCache.confirmationLimit)
        #expect(cache.lookup([1]) != nil, "confirmed a second ago: still served")
        clock.advance(by: .milliseconds(1))
        #expect(cache.lookup([1]) == nil, "overdue: not served")
        // Reads go to the database meanwhile; what they store is not served either.
        cache.store([2], session: session("s2", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([2]) == nil)
        clock.advance(by: .seconds(5))
        #expect(cache.lookup([1]) == nil)

        // A late confirmation: everything goes, and a read begun before is not kept.
        let before = cache.generation
        cache.listenerConfirmed()
        #expect(cache.count == 0)
        cache.store([2], session: session("s2", of: user), user: user, readAt: before)
        #expect(cache.count == 0)
        cache.store([2], session: session("s2", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([2])?.session.id == "s2", "confirmed again: serving goes on")
        #expect(cache.outages == SessionCacheOutages(disconnected: 0, unconfirmed: 1), "the late confirmation is counted")

        // Overdue again; the listener gives the connection up and reconnects.
        clock.advance(by: .milliseconds(1_001))
        #expect(cache.lookup([2]) == nil)
        cache.listenerLost()
        cache.listenerLost()
        #expect(cache.outages == SessionCacheOutages(disconnected: 1, unconfirmed: 1), "a failed reconnection is the same outage")
        cache.listenerConnected()
        #expect(cache.count == 0)
        cache.store([2], session: session("s2", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([2]) != nil)
        // Confirmations in time keep it served, however long it runs.
        for _ in 0..<10 {
            clock.advance(by: NotifiedSessionCache.confirmationInterval)
            cache.listenerConfirmed()
        }
        #expect(cache.lookup([2]) != nil)
        #expect(cache.outages == SessionCacheOutages(disconnected: 1, unconfirmed: 1))
    }

    @Test func notificationsDropTheSessionOrEverySessionOfTheUser() async throws {
        let user = try await Self.makeUser()
        let cache = makeCache()
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
        let cache = makeCache()
        cache.listenerConnected()
        let before = cache.generation
        cache.invalidate("s:s1")  // arrives while the read of s1 is in flight
        cache.store([1], session: session("s1", of: user), user: user, readAt: before)
        #expect(cache.lookup([1]) == nil)
    }

    /// This instance's write has committed and returns, and the listener has not heard its
    /// notifications yet: nothing is served from memory until its marker, which follows them,
    /// is heard. While the COMMIT runs (the write has not returned) serving goes on.
    @Test func aCommittedWriteSuspendsServingUntilItsMarkerIsHeard() async throws {
        let user = try await Self.makeUser()
        let cache = makeCache()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        let marker = try #require(cache.markerForCommit())
        #expect(cache.lookup([1]) != nil, "the COMMIT is running: reads are concurrent with the write")
        cache.committed(with: marker)
        #expect(cache.lookup([1]) == nil)
        // Another instance's marker says nothing about this instance's write.
        cache.invalidate("w:" + RecordID.make(prefix: "") + ":1")
        #expect(cache.lookup([1]) == nil)
        cache.invalidate("s:s1")  // the write's own change, heard before its marker
        cache.store([2], session: session("s2", of: user), user: user, readAt: cache.generation)
        cache.invalidate(marker.payload)
        #expect(cache.lookup([1]) == nil)
        #expect(cache.lookup([2])?.session.id == "s2")
    }

    /// A read that began before the write's COMMIT applied stores the old row, even after a
    /// clear while the COMMIT ran (another write that found nothing cached): once the write has
    /// returned, that copy is not served, and the write's own notification removes it before
    /// its marker arrives.
    @Test func aReadStoredWhileTheCommitRanIsNotServedAfterIt() async throws {
        let user = try await Self.makeUser()
        let cache = makeCache()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        let marker = try #require(cache.markerForCommit())
        cache.forgetAll()  // another write's clear while this COMMIT runs
        cache.store([2], session: session("s2", of: user), user: user, readAt: cache.generation)  // the old row of s2
        cache.committed(with: marker)
        #expect(cache.lookup([2]) == nil, "the copy read before the write committed is not served after it returned")
        cache.invalidate("s:s2")
        cache.invalidate(marker.payload)
        #expect(cache.lookup([2]) == nil, "and the write's own notification removed it")
        cache.store([2], session: session("s2", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([2]) != nil, "serving goes on")
    }

    /// The listener may hear a marker before the write's COMMIT has returned to it: the write
    /// then has nothing to wait for.
    @Test func aMarkerHeardBeforeItsCommitReturnedLeavesTheCacheServing() async throws {
        let user = try await Self.makeUser()
        let cache = makeCache()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        let marker = try #require(cache.markerForCommit())
        cache.invalidate(marker.payload)
        cache.committed(with: marker)
        #expect(cache.lookup([1]) != nil)
        // Heard once: a later write's marker is waited for as usual.
        let next = try #require(cache.markerForCommit())
        cache.committed(with: next)
        #expect(cache.lookup([1]) == nil)
        cache.invalidate(next.payload)
        #expect(cache.lookup([1]) != nil)
    }

    /// A clear between a marker's making and its COMMIT's return (another write that found
    /// nothing cached, the listener reconnecting) may have forgotten the marker as heard, or
    /// lost it with the connection: the write does not wait for it, which would stop serving
    /// for good; everything goes instead, and a read begun before is not kept.
    @Test(arguments: ["heard, then forgotten", "lost with the listener"])
    func aClearWhileTheCommitRanDoesNotLeaveAMarkerWaitedForEver(_ schedule: String) async throws {
        let user = try await Self.makeUser()
        let cache = makeCache()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        let marker = try #require(cache.markerForCommit())
        if schedule == "heard, then forgotten" {
            cache.invalidate("s:s1")
            cache.invalidate(marker.payload)
            cache.forgetAll()
        } else {
            cache.listenerLost()
            cache.listenerConnected()
        }
        let before = cache.generation
        cache.store([1], session: session("s1", of: user), user: user, readAt: before)  // possibly the old row
        cache.committed(with: marker)
        #expect(cache.lookup([1]) == nil, "the copy read before the write returned is gone")
        cache.store([1], session: session("s1", of: user), user: user, readAt: before)
        #expect(cache.count == 0, "and reads begun before are not kept")
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([1]) != nil, "serving goes on, waiting for nothing")
    }

    /// With nothing held there is no marker to wait for: instead a read that began before the
    /// commit (and may hold what the write changed) is not kept, and one stored while the
    /// write committed goes.
    @Test func aWriteWithNothingCachedRefusesTheReadsBeforeIt() async throws {
        let user = try await Self.makeUser()
        let cache = makeCache()
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

    /// A marker that will never be heard (the listener reconnected, or the COMMIT's answer was lost)
    /// leaves the cache empty and serving again, not suspended for good.
    @Test func anUnheardMarkerIsForgottenWithEverything() async throws {
        let user = try await Self.makeUser()
        let cache = makeCache()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        cache.committed(with: try #require(cache.markerForCommit()))
        cache.forgetAll()
        #expect(cache.count == 0)
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([1]) != nil)

        cache.committed(with: try #require(cache.markerForCommit()))
        cache.listenerLost()
        cache.listenerConnected()
        cache.store([1], session: session("s1", of: user), user: user, readAt: cache.generation)
        #expect(cache.lookup([1]) != nil)
    }
}
