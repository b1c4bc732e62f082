import OpenSSLCrypto
@testable import Store
import Testing

@Suite struct ReplayGuardTests {
    @Test(arguments: Engine.available)
    func aTokenIsRefusedTheSecondTime(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let hash = SHA256.hash("eyJ.identity.token")
            try await store.engine.write { try ReplayGuard.recordUsedToken(hash, expiresAt: 2_000, in: $0) }
            await #expect(try store.replay.isUsed(hash))
            await #expect(throws: ReplayError.tokenAlreadyUsed) {
                try await store.engine.write { try ReplayGuard.recordUsedToken(hash, expiresAt: 2_000, in: $0) }
            }
            // Another token is fine.
            try await store.engine.write { try ReplayGuard.recordUsedToken(SHA256.hash("other"), expiresAt: 2_000, in: $0) }
        }
    }

    @Test(arguments: Engine.available)
    func aReplayRollsBackTheWholeSignIn(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let hash = SHA256.hash("token")
            try await store.engine.write { try ReplayGuard.recordUsedToken(hash, expiresAt: 2_000, in: $0) }
            await #expect(throws: ReplayError.tokenAlreadyUsed) {
                try await store.engine.write { connection in
                    let user = try UserStore.upsertOnSignIn(in: connection, identity: VerifiedIdentity(appleSub: "s"), profile: nil, now: 1).user
                    _ = try SessionStore.create(in: connection, userID: user.id, deviceName: nil, now: 1, ttl: 10)
                    try ReplayGuard.recordUsedToken(hash, expiresAt: 2_000, in: connection)
                }
            }
            await #expect(try store.users.user(appleSub: "s") == nil)
            let sessions = try await store.engine.read { try $0.queryOne("SELECT count(*) FROM sessions")?.int(0) }
            #expect(sessions == 0)
        }
    }

    @Test(arguments: Engine.available)
    func aNonceIsUsedOnceAndOnlyWithinTenMinutes(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let guard_ = store.replay
            let nonce = try await guard_.issueNonce(now: 1_000)
            #expect(nonce.expiresAt == 1_600)
            #expect(nonce.value.count == 43)
            // Only its hash is stored.
            let stored = try await store.engine.read { try $0.queryOne("SELECT nonce_hash FROM issued_nonces")?.blob(0) }
            #expect(stored == SHA256.hash(nonce.value))

            #expect(try await guard_.consumeNonce(nonce.value, now: 1_100) == .consumed)
            #expect(try await guard_.consumeNonce(nonce.value, now: 1_101) == .alreadyUsed)

            let late = try await guard_.issueNonce(now: 1_000)
            #expect(try await guard_.consumeNonce(late.value, now: 1_600) == .expired)
            #expect(try await guard_.consumeNonce("client-made", now: 1_100) == .notIssued)
        }
    }

    @Test(arguments: Engine.available)
    func aNonceUsedByManyAtOnceIsConsumedOnce(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let nonce = try await store.replay.issueNonce(now: 1_000)
            let uses = try await withThrowingTaskGroup(of: NonceUse.self) { group in
                for _ in 0..<20 { group.addTask { try await store.replay.consumeNonce(nonce.value, now: 1_100) } }
                return try await group.reduce(into: [NonceUse]()) { $0.append($1) }
            }
            #expect(uses.filter { $0 == .consumed }.count == 1)
            #expect(uses.filter { $0 == .alreadyUsed }.count == 19)
            let usedAt = try await store.engine.read { try $0.queryOne("SELECT used_at FROM issued_nonces")?.int64(0) }
            #expect(usedAt == 1_100)
        }
    }

    @Test(arguments: Engine.available)
    func pruneRemovesOnlyExpiredRows(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let guard_ = store.replay
            try await store.engine.write { connection in
                try ReplayGuard.recordUsedToken(SHA256.hash("old"), expiresAt: 1_000, in: connection)
                try ReplayGuard.recordUsedToken(SHA256.hash("new"), expiresAt: 3_000, in: connection)
            }
            let old = try await guard_.issueNonce(now: 0)
            let fresh = try await guard_.issueNonce(now: 1_900)
            #expect(try await guard_.prune(now: 2_000) == 2)
            await #expect(try guard_.isUsed(SHA256.hash("new")))
            await #expect(try !guard_.isUsed(SHA256.hash("old")))
            #expect(try await guard_.consumeNonce(old.value, now: 2_000) == .notIssued)
            #expect(try await guard_.consumeNonce(fresh.value, now: 2_000) == .consumed)
        }
    }
}
