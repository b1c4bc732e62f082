import SQLite
import Store
import Testing

@Suite struct NotificationLedgerTests {
    @Test func aJtiIsRecordedOnce() async throws {
        try await withDatabase { (database: Database) async throws in
            @Sendable func record(_ jti: String, _ status: String, now: Int64) async throws -> Bool {
                try await database.write { try NotificationLedger.recordIfNew(jti: jti, status: status, now: now, in: $0) }
            }
            func status(_ jti: String) throws -> String? {
                try database.read { try NotificationLedger.status(jti: jti, in: $0) }
            }
            #expect(try await record("j1", "processed", now: 1))
            #expect(try await record("j1", "ignored", now: 2) == false)
            #expect(try await record("j2", "ignored", now: 2))
            #expect(try status("j1") == "processed")
            #expect(try status("j3") == nil)
        }
    }

    @Test func aRedeliveryChangesNothing() async throws {
        try await withDatabase { database in
            _ = try await database.write {
                try UserStore.upsertOnSignIn(
                    in: $0, identity: VerifiedIdentity(appleSub: "s", email: "r@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true),
                    profile: nil, now: 1
                )
            }
            @Sendable func deliver(jti: String, enabled: Bool, now: Int64) async throws -> Bool {
                try await database.write { connection in
                    guard try NotificationLedger.recordIfNew(jti: jti, status: "processed", now: now, in: connection) else { return false }
                    return try UserStore.setEmailForwarding(in: connection, appleSub: "s", enabled: enabled, now: now)
                }
            }
            #expect(try await deliver(jti: "a", enabled: false, now: 2))
            #expect(try await deliver(jti: "b", enabled: true, now: 3))
            // Redelivery of "a" must not disable forwarding again.
            #expect(try await deliver(jti: "a", enabled: false, now: 4) == false)
            await #expect(try UserStore(database: database).user(appleSub: "s")?.emailForwarding == .enabled)
        }
    }
}
