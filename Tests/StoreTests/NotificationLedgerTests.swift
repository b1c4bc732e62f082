@testable import Store
import Testing

@Suite struct NotificationLedgerTests {
    @Test(arguments: Engine.available)
    func aJtiIsRecordedOnce(_ engine: Engine) async throws {
        try await withStore(engine) { (store: Store) async throws in
            @Sendable func record(_ jti: String, _ status: String, now: Int64) async throws -> Bool {
                try await store.engine.write { try NotificationLedger.recordIfNew(jti: jti, status: status, now: now, in: $0) }
            }
            @Sendable func status(_ jti: String) async throws -> String? {
                try await store.engine.read { try NotificationLedger.status(jti: jti, in: $0) }
            }
            #expect(try await record("j1", "processed", now: 1))
            #expect(try await record("j1", "ignored", now: 2) == false)
            #expect(try await record("j2", "ignored", now: 2))
            #expect(try await status("j1") == "processed")
            #expect(try await status("j3") == nil)
        }
    }

    @Test(arguments: Engine.available)
    func aRedeliveryChangesNothing(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            _ = try await store.engine.write {
                try UserStore.upsertOnSignIn(
                    in: $0, identity: VerifiedIdentity(appleSub: "s", email: "r@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true),
                    profile: nil, now: 1
                )
            }
            @Sendable func deliver(jti: String, enabled: Bool, now: Int64) async throws -> Bool {
                try await store.engine.write { connection in
                    guard try NotificationLedger.recordIfNew(jti: jti, status: "processed", now: now, in: connection) else { return false }
                    return try UserStore.setEmailForwarding(in: connection, appleSub: "s", enabled: enabled, now: now)
                }
            }
            #expect(try await deliver(jti: "a", enabled: false, now: 2))
            #expect(try await deliver(jti: "b", enabled: true, now: 3))
            // Redelivery of "a" must not disable forwarding again.
            #expect(try await deliver(jti: "a", enabled: false, now: 4) == false)
            await #expect(try store.users.user(appleSub: "s")?.emailForwarding == .enabled)
        }
    }
}
