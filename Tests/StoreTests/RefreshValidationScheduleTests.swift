@testable import Store
import Testing

@Suite struct RefreshValidationScheduleTests {
    /// A user with a stored refresh token (stored at `storedAt`) and, when `live`, a session.
    private func userWithToken(_ store: Store, sub: String, storedAt: Int64, live: Bool = true) async throws -> String {
        let userID = try await makeUser(store, sub: sub, now: storedAt)
        try await store.vault.store(userID: userID, clientID: "com.example.app", refreshToken: "r-\(sub)", accessToken: "a", now: storedAt)
        if live {
            _ = try await store.sessions.create(userID: userID, deviceName: nil, now: storedAt, ttl: 1_000_000)
        }
        return userID
    }

    @Test(arguments: Engine.available)
    func newTokensAreScheduledWithinTheLastTenthOfAnIntervalAfterTheyWereStored(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let schedule = store.refreshSchedule
            var users: [String] = []
            for index in 0..<40 { users.append(try await userWithToken(store, sub: "u\(index)", storedAt: 1_000)) }
            #expect(try await schedule.scheduleNew(interval: 86_400) == 40)
            // Already scheduled: nothing to do, and no write.
            #expect(try await schedule.scheduleNew(interval: 86_400) == 0)
            var due: [Int64] = []
            for user in users { due.append(try #require(try await schedule.dueAt(userID: user))) }
            #expect(due.allSatisfy { $0 > 1_000 + 86_400 - 8_640 && $0 <= 1_000 + 86_400 })
            // Spread, not all at one instant.
            #expect(Set(due).count > 1)
        }
    }

    @Test(arguments: Engine.available)
    func dueListsOverdueTokensFirstAndSaysWhichUsersHaveALiveSession(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let schedule = store.refreshSchedule
            let live = try await userWithToken(store, sub: "live", storedAt: 100)
            let asleep = try await userWithToken(store, sub: "asleep", storedAt: 50, live: false)
            let later = try await userWithToken(store, sub: "later", storedAt: 5_000)
            try await schedule.scheduleNew(interval: 10)
            let due = try await schedule.due(now: 1_000, idleTTL: 10_000, limit: 10)
            #expect(due == [
                RefreshValidationSchedule.Due(userID: asleep, hasLiveSession: false),
                RefreshValidationSchedule.Due(userID: live, hasLiveSession: true),
            ])
            #expect(!due.contains { $0.userID == later })
            await #expect(try schedule.due(now: 1_000, idleTTL: 10_000, limit: 1).count == 1)
            // A session idle for longer than idleTTL is not live.
            await #expect(try schedule.due(now: 1_000, idleTTL: 500, limit: 10).allSatisfy { !$0.hasLiveSession })
        }
    }

    @Test(arguments: Engine.available)
    func validatedAndPostponedTokensMoveToTheirNextDueTime(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let schedule = store.refreshSchedule
            let ada = try await userWithToken(store, sub: "ada", storedAt: 100)
            let eve = try await userWithToken(store, sub: "eve", storedAt: 100)
            try await schedule.scheduleNew(interval: 10)
            try await schedule.recordValidated(userID: ada, now: 200, nextDueAt: 300)
            try await schedule.postpone(userIDs: [eve], until: 400)
            await #expect(try schedule.dueAt(userID: ada) == 300)
            await #expect(try schedule.dueAt(userID: eve) == 400)
            await #expect(try store.vault.load(userID: ada)?.validatedAt == 200)
            await #expect(try schedule.due(now: 299, idleTTL: 10_000, limit: 10).isEmpty)
            await #expect(try schedule.due(now: 300, idleTTL: 10_000, limit: 10).map(\.userID) == [ada])
        }
    }

    @Test(arguments: Engine.available)
    func aNewSignInsTokensAreScheduledAfresh(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let schedule = store.refreshSchedule
            let ada = try await userWithToken(store, sub: "ada", storedAt: 100)
            try await schedule.scheduleNew(interval: 10)
            await #expect(try schedule.dueAt(userID: ada) != nil)
            try await store.vault.store(userID: ada, clientID: "com.example.app", refreshToken: "r-new", accessToken: "a", now: 900)
            await #expect(try schedule.dueAt(userID: ada) == nil)
            try await schedule.scheduleNew(interval: 10)
            await #expect(try schedule.dueAt(userID: ada) == 910)
        }
    }

    @Test(arguments: Engine.available)
    func tokensWithoutARefreshTokenAreNeverDue(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let schedule = store.refreshSchedule
            let userID = try await makeUser(store, sub: "access-only")
            try await store.vault.store(userID: userID, clientID: "c", refreshToken: nil, accessToken: "a", now: 1)
            #expect(try await schedule.scheduleNew(interval: 10) == 0)
            await #expect(try schedule.due(now: 1_000_000, idleTTL: 10, limit: 10).isEmpty)
        }
    }
}
