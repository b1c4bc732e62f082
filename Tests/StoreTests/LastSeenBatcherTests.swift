@testable import Store
import Testing

@Suite struct LastSeenBatcherTests {
    private func lastSeen(_ store: Store, _ id: String) async throws -> Int64? {
        try await store.engine.read { try $0.queryOne("SELECT last_seen_at FROM sessions WHERE id = ?", [.text(id)])?.int64(0) }
    }

    @Test(arguments: Engine.available)
    func manyTouchesWriteOnce(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let userID = try await makeUser(store)
            let sessions = store.uncachedSessions
            var ids: [String] = []
            for _ in 0..<5 {
                ids.append(try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 100_000).record.id)
            }
            let batcher = store.lastSeenBatcher(interval: 60, now: 1_000)

            // 100 touches inside one interval: nothing written yet.
            for step in 0..<100 {
                try await batcher.touch(ids[step % 5], at: 1_000 + Int64(step % 50))
            }
            #expect(batcher.flushCount == 0)
            #expect(batcher.pendingCount == 5)
            #expect(try await lastSeen(store, ids[0]) == 1_000)

            // The first touch after the interval flushes everything, in one write.
            try await batcher.touch(ids[0], at: 1_060)
            #expect(batcher.flushCount == 1)
            #expect(batcher.pendingCount == 0)
            #expect(try await lastSeen(store, ids[0]) == 1_060)
            #expect(try await lastSeen(store, ids[4]) == 1_049)

            // Next touch within the new interval waits again.
            try await batcher.touch(ids[1], at: 1_061)
            #expect(batcher.flushCount == 1)
            #expect(try await batcher.flush(now: 1_062) == 1)
            #expect(batcher.flushCount == 2)
            #expect(try await lastSeen(store, ids[1]) == 1_061)
            // Nothing pending: no write.
            #expect(try await batcher.flush(now: 1_063) == 0)
            #expect(batcher.flushCount == 2)
        }
    }

    /// What the batcher holds is this instance's knowledge until committed: `live` asks it when
    /// the stored time looks idle.
    @Test(arguments: Engine.available)
    func aUseInMemoryKeepsALookingIdleSessionLive(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let userID = try await makeUser(store)
            let sessions = store.uncachedSessions
            let session = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 100_000)
            let batcher = store.lastSeenBatcher(interval: 60, now: 1_000)
            #expect(batcher.lastUse(of: session.record.id) == nil)
            #expect(!batcher.record(session.record.id, at: 1_030))
            batcher.record(session.record.id, at: 1_020)
            #expect(batcher.lastUse(of: session.record.id) == 1_030)
            let token = Substring(session.token)
            #expect(try await sessions.live(token: token, now: 1_620, idleTTL: 600) == nil, "stored 1,000: idle")
            #expect(try await sessions.live(token: token, now: 1_620, idleTTL: 600, recentUse: batcher.lastUse(of:)) != nil)
            #expect(try await sessions.live(token: token, now: 1_630, idleTTL: 600, recentUse: batcher.lastUse(of:)) == nil)
            try await batcher.flush(now: 1_620)
            // Still known after the commit: a cache that has not yet heard of the write may
            // hold the stored 1,000 (seen on PostgreSQL, whose cache learns by notification).
            #expect(batcher.lastUse(of: session.record.id) == 1_030)
            #expect(try await sessions.live(token: token, now: 1_620, idleTTL: 600) != nil, "written: the database knows")
            // Until the next batch commits.
            let other = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 100_000)
            batcher.record(other.record.id, at: 1_640)
            try await batcher.flush(now: 1_700)
            #expect(batcher.lastUse(of: session.record.id) == nil)
            #expect(batcher.lastUse(of: other.record.id) == 1_640)
        }
    }

    @Test(arguments: Engine.available)
    func flushKeepsIdleSessionsAliveAndNeverMovesBack(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let userID = try await makeUser(store)
            let sessions = store.uncachedSessions
            let session = try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 100_000)
            let batcher = store.lastSeenBatcher(interval: 10, now: 1_000)
            batcher.record(session.record.id, at: 1_500)
            try await batcher.flush(now: 1_500)
            await #expect(try sessions.authenticate(token: session.token, now: 2_000, idleTTL: 600) != nil)
            // A late-arriving older touch does not move last_seen_at back.
            batcher.record(session.record.id, at: 1_200)
            try await batcher.flush(now: 1_501)
            #expect(try await lastSeen(store, session.record.id) == 1_500)
            // An ended session stays ended.
            #expect(try await sessions.end(id: session.record.id, userID: userID))
            batcher.record(session.record.id, at: 1_600)
            try await batcher.flush(now: 1_600)
            #expect(try await lastSeen(store, session.record.id) == nil)
        }
    }

    @Test func intervalMeetsTheSpecBound() {
        #expect(LastSeenBatcher.interval(idleTTL: 7 * 86_400) == 60)
        #expect(LastSeenBatcher.interval(idleTTL: 3_000) == 30)
        #expect(LastSeenBatcher.interval(idleTTL: 50) == 1)
    }
}

@Suite struct LastSeenBatcherConcurrencyTests {
    @Test(arguments: Engine.available)
    func concurrentTouchesLoseNothingAndFlushOnce(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let userID = try await makeUser(store)
            let sessions = store.uncachedSessions
            var ids: [String] = []
            for _ in 0..<8 {
                ids.append(try await sessions.create(userID: userID, deviceName: nil, now: 1_000, ttl: 100_000).record.id)
            }
            let batcher = store.lastSeenBatcher(interval: 60, now: 1_000)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, id) in ids.enumerated() {
                    group.addTask {
                        for step in 0..<50 { batcher.record(id, at: 1_000 + Int64(index * 10 + step % 5)) }
                    }
                }
                try await group.waitForAll()
            }
            #expect(batcher.pendingCount == 8)
            async let first = batcher.flush(now: 1_100)
            async let second = batcher.flush(now: 1_100)
            let written = try await first + second
            #expect(written == 8)
            #expect(batcher.flushCount == 1)
            for (index, id) in ids.enumerated() {
                let seen = try await store.engine.read { try $0.queryOne("SELECT last_seen_at FROM sessions WHERE id = ?", [.text(id)])?.int64(0) }
                #expect(seen == 1_000 + Int64(index * 10 + 4))
            }
        }
    }
}
