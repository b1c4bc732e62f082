import Foundation
import OpenSSLCrypto
import PostgreSQL
import Store
import Testing
import TestSupport
import WireFormat

/// The Store's named operations, one body run on SQLite and on PostgreSQL (issue 13). Each
/// test gets a fresh database (`withStore`).
@Suite(.timeLimit(.minutes(2)))
struct BothEnginesTests {
    static func signIn(_ store: Store, sub: String, token: String, nonce: String? = nil, grant: AppleTokenGrant? = nil, now: Int64 = 1_000)
        async throws -> Store.SignedIn
    {
        var write = SignInWrite(
            identity: VerifiedIdentity(appleSub: sub, email: "\(sub)@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true),
            tokenHash: SHA256.hash(token), tokenExpiresAt: now + 600, sessionTTL: 86_400)
        write.nonce = nonce
        write.appleTokens = grant
        write.deviceName = "iPhone"
        return try await store.completeSignIn(write, now: now)
    }

    @Test(arguments: Engine.available)
    func aSignInMakesAUserAndASessionThatAuthenticatesUntilItEnds(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let first = try await Self.signIn(store, sub: "sub-1", token: "token-1")
            #expect(first.created)
            let found = try #require(try await store.sessions.authenticate(token: first.session.token, now: 1_001, idleTTL: 3_600))
            #expect(found.1.appleSub == "sub-1")
            #expect(found.1.email == "sub-1@privaterelay.appleid.com")
            #expect(found.1.isPrivateEmail)

            let again = try await Self.signIn(store, sub: "sub-1", token: "token-2")
            #expect(!again.created)
            #expect(again.user.id == first.user.id)
            #expect(try await store.sessions.list(userID: first.user.id, now: 1_001).count == 2)

            #expect(try await store.sessions.end(id: first.session.record.id, userID: first.user.id))
            #expect(try await store.sessions.authenticate(token: first.session.token, now: 1_001, idleTTL: 3_600) == nil)
            #expect(try await store.sessions.end(id: first.session.record.id, userID: first.user.id) == false)
        }
    }

    @Test(arguments: Engine.available)
    func aReplayedTokenOrNonceKeepsNothing(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            _ = try await Self.signIn(store, sub: "sub-2", token: "token-1")
            await #expect(throws: SignInConflict.tokenReplayed) { try await Self.signIn(store, sub: "sub-2", token: "token-1") }
            #expect(try await store.replay.isUsed(SHA256.hash("token-1")))

            let nonce = try await store.replay.issueNonce(now: 1_000)
            _ = try await Self.signIn(store, sub: "sub-3", token: "token-3", nonce: nonce.value)
            await #expect(throws: SignInConflict.nonceReplayed) {
                try await Self.signIn(store, sub: "sub-4", token: "token-4", nonce: nonce.value)
            }
            // The refused sign-in created nobody and left its token unused.
            #expect(try await store.users.user(appleSub: "sub-4") == nil)
            #expect(try await store.replay.isUsed(SHA256.hash("token-4")) == false)

            let late = try await store.replay.issueNonce(now: 1_000)
            await #expect(throws: SignInConflict.nonceExpired) {
                try await Self.signIn(store, sub: "sub-5", token: "token-5", nonce: late.value, now: 1_000 + 601)
            }
        }
    }

    @Test(arguments: Engine.available)
    func theOneTimeProfileIsKeptBeforeAppleAndAdoptedAfter(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            try await store.prepareCodeExchange(nonce: nil, appleSub: "sub-6", profile: ClientProfile(givenName: "Ada", familyName: "Lovelace"), now: 1_000)
            let signedIn = try await Self.signIn(store, sub: "sub-6", token: "token-6")
            #expect(signedIn.user.givenName == "Ada")
            #expect(signedIn.user.familyName == "Lovelace")
        }
    }

    @Test(arguments: Engine.available)
    func deletingAUserQueuesItsAppleTokenAndEndsEverything(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let signedIn = try await Self.signIn(
                store, sub: "sub-7", token: "token-7", grant: AppleTokenGrant(clientID: "com.example.app", refreshToken: "r-7", accessToken: "a-7"))
            #expect(try await store.vault.load(userID: signedIn.user.id)?.refreshToken == "r-7")

            let deletion = try #require(try await store.deleteUser(userID: signedIn.user.id, now: 2_000, firstAttemptAt: 2_003))
            #expect(deletion.user.id == signedIn.user.id)
            let queued = try #require(deletion.revocation)
            #expect(queued.token == "r-7")
            #expect(queued.kind == .refresh)
            #expect(try await store.users.user(id: signedIn.user.id) == nil)
            #expect(try await store.sessions.authenticate(token: signedIn.session.token, now: 2_000, idleTTL: 3_600) == nil)
            #expect(try await store.vault.load(userID: signedIn.user.id) == nil)

            #expect(try await store.revocations.due(now: 2_002).isEmpty)
            let due = try await store.revocations.due(now: 2_003)
            #expect(due.map(\.id) == [queued.id])
            #expect(due.first?.token == "r-7")
            try await store.revocations.complete(id: queued.id)
            #expect(try await store.revocations.depth().count == 0)
        }
    }

    @Test(arguments: Engine.available)
    func aNotificationAppliesOnceAndEndsSessionsOnConsentRevoked(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let signedIn = try await Self.signIn(store, sub: "sub-8", token: "token-8")
            let disabled = try await store.applyNotification([AccountEvent(kind: .emailDisabled, subject: "sub-8")], jti: "j-1", now: 1_100)
            #expect(disabled.outcome == .processed)
            #expect(try await store.users.user(appleSub: "sub-8")?.emailForwarding == .disabled)
            #expect(try await store.applyNotification([AccountEvent(kind: .emailDisabled, subject: "sub-8")], jti: "j-1", now: 1_101).outcome == .duplicate)
            #expect(try await store.applyNotification([AccountEvent(kind: .consentRevoked, subject: "nobody")], jti: "j-2", now: 1_102).outcome == .ignored)

            #expect(try await store.applyNotification([AccountEvent(kind: .consentRevoked, subject: "sub-8")], jti: "j-3", now: 1_103).outcome == .processed)
            #expect(try await store.users.user(appleSub: "sub-8")?.appleCredential == .revoked)
            #expect(try await store.sessions.authenticate(token: signedIn.session.token, now: 1_104, idleTTL: 3_600) == nil)
        }
    }

    @Test(arguments: Engine.available)
    func webSignInStatesAreUsedOnce(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let started = try await store.webSignIns.start(returnTo: "/account", now: 1_000)
            guard case .found(let pending) = try await store.webSignIns.consume(state: started.state, now: 1_001) else {
                Issue.record("the state was not found")
                return
            }
            #expect(pending.returnTo == "/account")
            #expect(pending.nonce == started.nonce)
            #expect(pending.isBound(to: started.binding))
            #expect(try await store.webSignIns.consume(state: started.state, now: 1_002) == .unknown)
        }
    }

    @Test(arguments: Engine.available)
    func refreshTokensAreScheduledAndARevokedOneIsMarkedOnlyIfUnchanged(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let signedIn = try await Self.signIn(
                store, sub: "sub-9", token: "token-9", grant: AppleTokenGrant(clientID: "com.example.app", refreshToken: "r-9", accessToken: "a-9"))
            #expect(try await store.refreshSchedule.scheduleNew(interval: 86_400) == 1)
            let dueAt = try #require(try await store.refreshSchedule.dueAt(userID: signedIn.user.id))
            #expect(dueAt > 1_000 + 86_400 - 8_641 && dueAt <= 1_000 + 86_400)

            #expect(try await store.markRevokedIfTokensUnchanged(userID: signedIn.user.id, storedAt: 999, now: 2_000) == false)
            #expect(try await store.markRevokedIfTokensUnchanged(userID: signedIn.user.id, storedAt: 1_000, now: 2_000))
            #expect(try await store.users.user(id: signedIn.user.id)?.appleCredential == .revoked)
        }
    }

    @Test(arguments: Engine.available)
    func serverStateKeepsBytesExactly(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let bytes = (0...255).map(UInt8.init)
            try await store.serverState.set("blob", bytes)
            #expect(try store.serverState.get("blob") == bytes)
            try await store.serverState.set("blob", [1])
            #expect(try store.serverState.get("blob") == [1])
            #expect(try await store.serverState.updatedAt("blob")?.hasSuffix("Z") == true)
            #expect(await store.ping())
        }
    }
}

extension BothEnginesTests {
    @Test(arguments: Engine.available)
    func claimedRevocationsAreLeasedAndConcurrentClaimsAreDisjoint(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            var ids: Set<Int64> = []
            for index in 0..<20 {
                ids.insert(try await store.queueRevocation(clientID: "com.example.app", token: "t-\(index)", kind: .refresh, now: 1_000))
            }
            // Two workers claim at once; each row goes to exactly one of them.
            async let first = store.revocations.claimDue(now: 1_000, lease: 120, limit: 15)
            async let second = store.revocations.claimDue(now: 1_000, lease: 120, limit: 15)
            let (one, two) = try await (first, second)
            #expect(Set(one.map(\.id)).isDisjoint(with: two.map(\.id)))
            #expect(Set(one.map(\.id)).union(two.map(\.id)) == ids)
            #expect(one.allSatisfy { $0.token.hasPrefix("t-") })

            // Leased: not due again until the lease has passed (a worker that died mid-attempt).
            #expect(try await store.revocations.claimDue(now: 1_119, lease: 120).isEmpty)
            #expect(try await store.revocations.claimDue(now: 1_120, lease: 120, limit: 100).count == 20)
        }
    }
}

@Suite struct StoreLocationTests {
    @Test func aURLsPasswordNeverReachesAReport() {
        #expect(Store.redacted("postgres://siwa:secret@db:5432/siwa") == "postgres://siwa:***@db:5432/siwa")
        #expect(Store.redacted("postgresql://u:p@ss:w@[::1]:5432/db?sslmode=require") == "postgresql://u:***@[::1]:5432/db?sslmode=require")
        #expect(Store.redacted("postgres://siwa@db/siwa") == "postgres://siwa@db/siwa")
        #expect(Store.redacted("data/siwa.sqlite3") == "data/siwa.sqlite3")
        #expect(Store.isPostgres("postgres://x") && Store.isPostgres("postgresql://x"))
        #expect(!Store.isPostgres("data/postgres://x"))
    }
}

extension BothEnginesTests {
    @Test(arguments: Engine.available)
    func dueRefreshTokensAreClaimedOnceWithALease(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            var users: Set<String> = []
            for index in 0..<6 {
                let signedIn = try await Self.signIn(
                    store, sub: "lease-\(index)", token: "lease-token-\(index)",
                    grant: AppleTokenGrant(clientID: "com.example.app", refreshToken: "r-\(index)", accessToken: "a-\(index)"))
                users.insert(signedIn.user.id)
            }
            #expect(try await store.refreshSchedule.scheduleNew(interval: 100) == 6)
            async let first = store.refreshSchedule.claimDue(now: 1_200, idleTTL: 86_400, limit: 4, lease: 300)
            async let second = store.refreshSchedule.claimDue(now: 1_200, idleTTL: 86_400, limit: 4, lease: 300)
            let (one, two) = try await (first, second)
            #expect(Set(one.map(\.userID)).isDisjoint(with: two.map(\.userID)))
            #expect(Set(one.map(\.userID)).union(two.map(\.userID)) == users)
            #expect((one + two).allSatisfy { $0.hasLiveSession })
            #expect(try await store.refreshSchedule.claimDue(now: 1_499, idleTTL: 86_400, limit: 10, lease: 300).isEmpty)
            #expect(try await store.refreshSchedule.claimDue(now: 1_500, idleTTL: 86_400, limit: 10, lease: 300).count == 6)
        }
    }
}

@Suite(
    .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"),
    .timeLimit(.minutes(2)))
struct CopyDatabaseTests {
    @Test func aPopulatedSQLiteDatabaseWorksTheSameOnPostgreSQLAfterTheCopy() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/siwa.sqlite3"
            let sqlite = try Store.open(path, connections: 2) { testDataKey }
            let ada = try await BothEnginesTests.signIn(
                sqlite, sub: "copy-ada", token: "copy-1", grant: AppleTokenGrant(clientID: "com.example.app", refreshToken: "r-ada", accessToken: "a-ada"))
            let bob = try await BothEnginesTests.signIn(sqlite, sub: "copy-bob", token: "copy-2")
            let queued = try await sqlite.queueRevocation(clientID: "com.example.app", token: "orphan", kind: .access, now: 1_000)
            _ = try await sqlite.applyNotification([AccountEvent(kind: .emailDisabled, subject: "copy-bob")], jti: "copy-jti", now: 1_001)
            _ = try await sqlite.transfers.recordExport(userID: ada.user.id, target: "TEAMBBBB01", transferSub: "ts-copy", now: 1_001)
            sqlite.close()

            let url = try await PostgresCluster.shared().makeDatabase()
            let copied = Dictionary(uniqueKeysWithValues: try Store.copy(fromSQLite: path, toPostgres: url).map { ($0.table, $0.rows) })
            #expect(copied["users"] == 2)
            #expect(copied["sessions"] == 2)
            #expect(copied["revocations"] == 1)
            #expect(copied["team_transfers"] == 1)

            let postgres = try Store.open(url, connections: 2) { testDataKey }
            defer { postgres.close() }
            let found = try #require(try await postgres.sessions.authenticate(token: ada.session.token, now: 1_002, idleTTL: 86_400))
            #expect(found.1.id == ada.user.id)
            #expect(try await postgres.sessions.authenticate(token: bob.session.token, now: 1_002, idleTTL: 86_400)?.1.emailForwarding == .disabled)
            // Sealed tokens were copied sealed and open with the same key.
            #expect(try await postgres.vault.load(userID: ada.user.id)?.refreshToken == "r-ada")
            #expect(try await postgres.revocations.claimDue(now: 1_000, lease: 60).map(\.id) == [queued])
            #expect(try await postgres.queueRevocation(clientID: "com.example.app", token: "next", kind: .access, now: 1_003) > queued)
            #expect(try await postgres.applyNotification([], jti: "copy-jti", now: 1_004).outcome == .duplicate)
            #expect(try await postgres.transfers.exported(target: "TEAMBBBB01") == [TransferRecord(userID: ada.user.id, externalID: nil, transferSub: "ts-copy")])
            // The same token is still a replay on the new engine.
            await #expect(throws: SignInConflict.tokenReplayed) { try await BothEnginesTests.signIn(postgres, sub: "copy-ada", token: "copy-1") }

            #expect(throws: CopyFailure.self) { try Store.copy(fromSQLite: path, toPostgres: url) }
        }
    }
}

extension BothEnginesTests {
    @Test(arguments: Engine.available)
    func housekeepingDeletesWhatExpiredInOneTransaction(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let live = try await Self.signIn(store, sub: "prune-live", token: "prune-1", now: 10_000)
            _ = try await Self.signIn(store, sub: "prune-old", token: "prune-2", now: 1_000)
            _ = try await store.webSignIns.start(returnTo: "/", now: 1_000)
            // The old session is past its idle TTL, the old token mark and web state past theirs.
            let deleted = try #require(try await store.pruneExpired(now: 10_001, idleTTL: 3_600))
            #expect(deleted == 3)
            #expect(try await store.sessions.authenticate(token: live.session.token, now: 10_001, idleTTL: 3_600) != nil)
            #expect(try await store.pruneExpired(now: 10_001, idleTTL: 3_600) == 0)
        }
    }
}

@Suite(
    .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"),
    .timeLimit(.minutes(1)))
struct HousekeepingTurnTests {
    /// Of several instances one prunes at a time: while another holds the turn, nil.
    @Test func whileAnotherInstanceHoldsTheTurnNothingIsDone() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        let store = try Store.open(url, connections: 2) { testDataKey }
        defer { store.close() }
        let other = try PostgresConnection(url)
        defer { other.close() }
        try other.execute("BEGIN")
        _ = try other.query("SELECT pg_advisory_xact_lock($1)", [.integer(PostgresConnection.advisoryLockKey("siwa-server housekeeping"))])
        #expect(try await store.pruneExpired(now: 1_000, idleTTL: 60) == nil)
        try other.execute("COMMIT")
        #expect(try await store.pruneExpired(now: 1_000, idleTTL: 60) == 0)
    }
}
