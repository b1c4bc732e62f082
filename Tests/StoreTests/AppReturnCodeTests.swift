import OpenSSLCrypto
import Store
import Testing

/// The one-time codes that return a web sign-in to an app (docs/guides/connecting-your-backend.md), on both engines: the user
/// is committed with the code and no session; the code makes one session, once, within its
/// minute, and only for a verifier the caller accepts; any attempt uses it up.
@Suite(.timeLimit(.minutes(2)))
struct AppReturnCodeTests {
    static func write(sub: String, token: String) -> SignInWrite {
        SignInWrite(identity: VerifiedIdentity(appleSub: sub), tokenHash: SHA256.hash(token), tokenExpiresAt: 2_000, sessionTTL: 3_600)
    }

    @Test(arguments: Engine.available)
    func aCodeMakesOneSessionOnceWithinItsMinute(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let grant = AppReturnGrant(codeHash: SHA256.hash("code-1"), codeChallenge: "challenge-1", expiresAt: 1_060)
            let (user, created) = try await store.completeSignIn(Self.write(sub: "app-1", token: "t1"), returningToApp: grant, now: 1_000)
            #expect(created)
            #expect(try await store.sessions.list(userID: user.id, now: 1_000).isEmpty, "no session until the exchange")

            let accepts: @Sendable (String) -> Bool = { $0 == "challenge-1" }
            let redeemed = try await store.redeemAppReturnCode(codeHash: SHA256.hash("code-1"), verifies: accepts, deviceName: "Pixel", sessionTTL: 3_600, now: 1_059)
            #expect(redeemed?.user.id == user.id && redeemed?.created == true)
            #expect(redeemed?.session.record.deviceName == "Pixel")
            #expect(try await store.redeemAppReturnCode(codeHash: SHA256.hash("code-1"), verifies: accepts, deviceName: nil, sessionTTL: 3_600, now: 1_059) == nil)
            #expect(try await store.sessions.list(userID: user.id, now: 1_059).count == 1)
        }
    }

    @Test(arguments: Engine.available)
    func anExpiredCodeOrARefusedVerifierIsUsedUp(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            for (index, code) in ["late", "wrong"].enumerated() {
                let grant = AppReturnGrant(codeHash: SHA256.hash(code), codeChallenge: "c", expiresAt: 1_060)
                _ = try await store.completeSignIn(Self.write(sub: "app-\(code)", token: "t-\(index)"), returningToApp: grant, now: 1_000)
            }
            let always: @Sendable (String) -> Bool = { _ in true }
            let never: @Sendable (String) -> Bool = { _ in false }
            #expect(try await store.redeemAppReturnCode(codeHash: SHA256.hash("late"), verifies: always, deviceName: nil, sessionTTL: 60, now: 1_060) == nil)
            #expect(try await store.redeemAppReturnCode(codeHash: SHA256.hash("wrong"), verifies: never, deviceName: nil, sessionTTL: 60, now: 1_001) == nil)
            // Both are gone: the right verifier in time does not bring them back.
            for code in ["late", "wrong"] {
                #expect(try await store.redeemAppReturnCode(codeHash: SHA256.hash(code), verifies: always, deviceName: nil, sessionTTL: 60, now: 1_001) == nil)
            }
        }
    }

    @Test(arguments: Engine.available)
    func housekeepingDeletesExpiredCodes(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let grant = AppReturnGrant(codeHash: SHA256.hash("stale"), codeChallenge: "c", expiresAt: 1_060)
            _ = try await store.completeSignIn(Self.write(sub: "app-stale", token: "t"), returningToApp: grant, now: 1_000)
            let deleted = try await store.pruneExpired(now: 1_061, idleTTL: 86_400)
            #expect((deleted ?? 0) >= 1)
            let always: @Sendable (String) -> Bool = { _ in true }
            #expect(try await store.redeemAppReturnCode(codeHash: SHA256.hash("stale"), verifies: always, deviceName: nil, sessionTTL: 60, now: 1_000) == nil)
        }
    }
}
