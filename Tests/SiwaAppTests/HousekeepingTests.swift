import Foundation
import Store
import Testing
@testable import SiwaApp

@Suite struct HousekeepingTests {
    @Test(arguments: DatabaseEngine.available)
    func expiredRowsGoAndLiveOnesStay(_ engine: DatabaseEngine) async throws {
        // The application's own housekeeping runs at start on its clock, held far in the past so
        // its passes find nothing expired; on PostgreSQL a pass of it may still hold the
        // housekeeping lock for a moment (this one then deletes nothing and is run again).
        try await withApp(engine: engine, clock: HeldClock(1_000_000)) { app in
            let database = app.sql
            let now = Int64(Date().timeIntervalSince1970)
            let sessions = app.store.sessions
            let userID = try await database.write { connection in
                try UserStore.upsertOnSignIn(in: connection, identity: VerifiedIdentity(appleSub: "001.house.1"), profile: nil, now: now).user.id
            }
            _ = try await sessions.create(userID: userID, deviceName: "live", now: now, ttl: 3_600)
            _ = try await sessions.create(userID: userID, deviceName: "expired", now: now - 7_200, ttl: 3_600)
            _ = try await sessions.create(userID: userID, deviceName: "idle", now: now - 8 * 86_400, ttl: 30 * 86_400)
            try await database.write { connection in
                try ReplayGuard.recordUsedToken([1, 2, 3], expiresAt: now - 1, in: connection)
                try ReplayGuard.recordUsedToken([4, 5, 6], expiresAt: now + 600, in: connection)
            }
            let housekeeping = Housekeeping(store: app.store, idleTTL: 7 * 86_400, logger: .init(label: "test"), clock: { now })
            var deleted = 0
            #expect(try await eventually {
                deleted += await housekeeping.runOnce()
                return deleted >= 3
            })
            #expect(deleted == 3)
            await #expect(try sessions.list(userID: userID, now: now).map(\.deviceName) == ["live"])
            #expect(try database.read { try $0.queryOne("SELECT COUNT(*) FROM used_identity_tokens")?.int(0) } == 1)
            #expect(await housekeeping.runOnce() == 0)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func metricsCountLiveSessions(_ engine: DatabaseEngine) async throws {
        try await withFixture(NativeSignInTests.Fixture(engine: engine, transport: .inProcess)) { fixture in
            await #expect(try fixture.harness.get("/metrics").body.contains("\nsiwa_sessions_active 0\n"))
            let token = try fixture.simulator.issueCode(sub: "000600.0.0600", clientID: NativeSignInTests.app, nonce: "n").identityToken
            await #expect(try fixture.signIn([("identity_token", .string(token)), ("nonce", .string("n"))]).status == 200)
            await #expect(try fixture.harness.get("/metrics").body.contains("\nsiwa_sessions_active 1\n"))
        }
    }
}
