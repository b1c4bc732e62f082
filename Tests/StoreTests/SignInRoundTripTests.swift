import OpenSSLCrypto
@testable import PostgreSQL
@testable import Store
import Testing
import TestSupport

/// A sign-in's transaction sends its reads and the token's mark together (on PostgreSQL one
/// round trip with BEGIN, issue 24), and still refuses, in the same order, and keeps what it did.
@Suite(.timeLimit(.minutes(2)))
struct SignInRoundTripTests {
    /// Round trips the store's one pooled connection has made (0 on SQLite).
    private static func roundTrips(_ store: Store) async throws -> Int {
        guard let engine = store.engine as? PostgresEngine else { return 0 }
        return try await engine.pool.withConnection { $0.roundTrips }
    }

    private static func holdProfile(_ store: Store, sub: String) async throws {
        try await store.prepareCodeExchange(nonce: nil, appleSub: sub, profile: ClientProfile(givenName: "Ada", familyName: "Lovelace"), now: 1_000)
    }

    @Test(arguments: Engine.available)
    func aNewUsersSignInWithANonceAndAHeldProfileTakesThreeRoundTrips(_ engine: Engine) async throws {
        try await withLocation(engine) { location in
            let store = try Store.open(location, connections: 1) { testDataKey }
            defer { store.close() }
            // The same path once before, so that every statement is prepared.
            try await Self.holdProfile(store, sub: "sub-0")
            _ = try await BothEnginesTests.signIn(store, sub: "sub-0", token: "token-0", nonce: try await store.replay.issueNonce(now: 1_000).value)

            try await Self.holdProfile(store, sub: "sub-1")
            let nonce = try await store.replay.issueNonce(now: 1_000)
            let before = try await Self.roundTrips(store)
            let signedIn = try await BothEnginesTests.signIn(store, sub: "sub-1", token: "token-1", nonce: nonce.value)
            let trips = try await Self.roundTrips(store) - before

            #expect(signedIn.created)
            #expect(signedIn.user.givenName == "Ada")
            #expect(try await store.sessions.authenticate(token: signedIn.session.token, now: 1_001, idleTTL: 3_600)?.1.id == signedIn.user.id)
            // The profile, the nonce and the token are used up by the commit.
            #expect(try await store.pendingProfiles.prune(now: 0) == 0)
            #expect(try await store.engine.read { try PendingProfileStore.adopt(appleSub: "sub-1", now: 1_001, in: $0) } == nil)
            #expect(try await store.replay.consumeNonce(nonce.value, now: 1_001) == .alreadyUsed)
            #expect(try await store.replay.isUsed(SHA256.hash("token-1")))
            // BEGIN with the nonce, the user, the profile and the token's mark; the user's row
            // with the nonce's and the profile's deferred writes; the session and events with COMMIT.
            if engine == .postgres { #expect(trips == 3) }
        }
    }

    /// A used token is refused first, as the read before Apple refuses it (a sign-in without a
    /// code may skip that read), whatever its nonce has become meanwhile; a used nonce with a
    /// fresh token is refused next; a refused sign-in keeps nothing, the token's mark included.
    @Test(arguments: Engine.available)
    func aUsedTokenIsRefusedFirstAndARefusalKeepsNothing(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let nonce = try await store.replay.issueNonce(now: 1_000)
            let first = try await BothEnginesTests.signIn(store, sub: "sub-1", token: "token-1", nonce: nonce.value)
            await #expect(throws: SignInConflict.tokenReplayed) {
                try await BothEnginesTests.signIn(store, sub: "sub-1", token: "token-1", nonce: nonce.value)
            }
            await #expect(throws: SignInConflict.tokenReplayed) {
                try await BothEnginesTests.signIn(store, sub: "sub-1", token: "token-1", nonce: nonce.value, now: 1_000 + 601)
            }

            // A fresh token with a used nonce: refused, and its mark rolled back with the rest.
            try await Self.holdProfile(store, sub: "sub-2")
            await #expect(throws: SignInConflict.nonceReplayed) {
                try await BothEnginesTests.signIn(store, sub: "sub-2", token: "token-2", nonce: nonce.value)
            }
            #expect(try await store.replay.isUsed(SHA256.hash("token-2")) == false)
            #expect(try await store.users.user(appleSub: "sub-2") == nil)
            // The held profile was not used up by the refused sign-in.
            #expect(try await BothEnginesTests.signIn(store, sub: "sub-2", token: "token-2").user.givenName == "Ada")
            #expect(try await store.sessions.list(userID: first.user.id, now: 1_001).count == 1)
        }
    }

    /// The same token sent by several sign-ins at once: one session, the others refused as
    /// replayed, one user.
    @Test(arguments: Engine.available)
    func theSameTokenAtOnceMakesOneSession(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        do {
                            _ = try await BothEnginesTests.signIn(store, sub: "sub-1", token: "token-1")
                            return true
                        } catch SignInConflict.tokenReplayed {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
            let user = try #require(try await store.users.user(appleSub: "sub-1"))
            #expect(try await store.sessions.list(userID: user.id, now: 1_001).count == 1)
        }
    }
}
