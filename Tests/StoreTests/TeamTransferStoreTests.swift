import Foundation
import OpenSSLCrypto
@testable import Store
import Testing
import TestSupport

/// docs/guides/team-transfer.md in the Store, on both engines: the sender's and the receiver's per-user state, so
/// the commands resume where they stopped; the move to the new `sub` (sessions and user id
/// stay, the previous team's Apple tokens go, `user.updated`); the sign-in during the window
/// that finds its user by `transfer_sub`; and the status numbers.
@Suite(.timeLimit(.minutes(2)))
struct TeamTransferStoreTests {
    static let teamB = "TEAMBBBB01"

    /// Events that say which `sub` a user has, so a test sees the move.
    static let renderer = WebhookEventRenderer { type, data, now in
        switch data {
        case .user(let user): "\(type.rawValue) \(user.id) \(user.appleSub ?? "-") \(user.email ?? "-") @\(now)"
        case .deleted(let user, let reason): "\(type.rawValue) \(user.id) \(reason.rawValue) @\(now)"
        case .passwordResetRequested(let userID, _, _, _), .emailVerificationRequested(let userID, _, _, _): "\(type.rawValue) \(userID) @\(now)"
        case .sessionCreated(let session, let method): "\(type.rawValue) \(session.userID) \(method.rawValue) @\(now)"
        case .sessionEnded(_, let userID, let reason): "\(type.rawValue) \(userID) \(reason.rawValue) @\(now)"
        }
    }

    static func withStore(_ engine: Engine, _ body: (Store) async throws -> Void) async throws {
        try await StoreTests.withStore(engine, events: renderer, body)
    }

    static func events(_ store: Store) async throws -> [String] { try await outboxBodies(store) }

    /// A sign-in with a code's tokens: a user, a session and stored Apple tokens.
    static func signIn(_ store: Store, sub: String, token: String, transferSub: String? = nil, now: Int64 = 1_000) async throws -> Store.SignedIn {
        var write = SignInWrite(
            identity: VerifiedIdentity(
                appleSub: sub, email: "\(sub)@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true, transferSub: transferSub),
            tokenHash: SHA256.hash(token), tokenExpiresAt: now + 600, sessionTTL: 86_400)
        write.appleTokens = AppleTokenGrant(clientID: "com.example.app", refreshToken: "r-\(token)", accessToken: "a-\(token)")
        return try await store.completeSignIn(write, now: now)
    }

    @Test(arguments: Engine.available)
    func theSenderRecordsEachUserOncePerTargetAndWritesNoSub(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            var ids: [String] = []
            for index in 0..<3 { ids.append(try await Self.signIn(store, sub: "a-sub-\(index)", token: "t\(index)").user.id) }
            ids.sort()
            _ = try await store.setExternalID(userID: ids[0], externalID: "ext-0", now: 1_000)
            let pending = try await store.transfers.pendingExports(target: Self.teamB, after: "", limit: 10)
            #expect(pending.map(\.userID) == ids)
            #expect(pending.map(\.appleSub).allSatisfy { $0.hasPrefix("a-sub-") })
            #expect(try await store.transfers.pendingExports(target: Self.teamB, after: ids[0], limit: 1).map(\.userID) == [ids[1]], "paged by id")

            #expect(try await store.transfers.recordExport(userID: ids[0], target: Self.teamB, transferSub: "ts-0", now: 2_000) == .recorded)
            #expect(try await store.transfers.recordExport(userID: ids[1], target: Self.teamB, transferSub: "ts-1", now: 2_000) == .recorded)
            try await store.transfers.recordExportFailure(userID: ids[2], target: Self.teamB, error: "invalid_request", now: 2_000)
            #expect(try await store.transfers.pendingExports(target: Self.teamB, after: "", limit: 10).map(\.userID) == [ids[2]])
            #expect(try await store.transfers.exportProgress(target: Self.teamB) == (3, 2, 0))
            #expect(try await store.transfers.exported(target: Self.teamB) == [
                TransferRecord(userID: ids[0], externalID: "ext-0", transferSub: "ts-0"),
                TransferRecord(userID: ids[1], externalID: nil, transferSub: "ts-1"),
            ])
            let status = try await store.transfers.status()
            #expect(status == TransferStatus(users: 3, exported: 2, imported: 0, pending: 0, failed: 1, windowStartedAt: nil))

            // A second try succeeds and clears the failure; no transfer_sub is ever given twice.
            #expect(try await store.transfers.recordExport(userID: ids[2], target: Self.teamB, transferSub: "ts-0", now: 2_001) == .transferSubTaken(byUserID: ids[0]))
            #expect(try await store.transfers.recordExport(userID: ids[2], target: Self.teamB, transferSub: "ts-2", now: 2_001) == .recorded)
            #expect(try await store.transfers.status().failed == 0)
            // Another target is another export.
            #expect(try await store.transfers.pendingExports(target: "TEAMCCCC01", after: "", limit: 10).count == 3)
            #expect(try await store.transfers.recordExport(userID: "usr_gone", target: Self.teamB, transferSub: "ts-9", now: 2_002) == .userGone)
        }
    }

    /// A password account has no Apple ID: never a candidate (its NULL `apple_sub` is not
    /// read), counted apart, and never pending.
    @Test(arguments: Engine.available)
    func usersWithoutAnAppleIDAreNeitherCandidatesNorPending(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let apple = try await Self.signIn(store, sub: "a-sub-apple", token: "apple").user.id
            let verification = EmailCode(kind: .verifyEmail, code: "v-pw", codeHash: SHA256.hash("v-pw"), expiresAt: 1_000 + 86_400)
            var signUp = PasswordSignUp(email: "pw@example.com", hash: "$scrypt$h", sessionTTL: 86_400, verification: verification)
            signUp.givenName = "Pat"
            let password = try await store.createPasswordUser(signUp, now: 1_000).user.id
            #expect(try await store.transfers.pendingExports(target: Self.teamB, after: "", limit: 10).map(\.userID) == [apple])
            #expect(try await store.transfers.exportProgress(target: Self.teamB) == (2, 0, 1))
            #expect(try await store.transfers.status() == TransferStatus(
                users: 2, exported: 0, imported: 0, pending: 1, failed: 0, windowStartedAt: nil, withoutAppleID: 1))
            #expect(try await store.transfers.recordExport(userID: apple, target: Self.teamB, transferSub: "ts-apple", now: 2_000) == .recorded)
            #expect(try await store.transfers.pendingExports(target: Self.teamB, after: "", limit: 10).isEmpty)
            #expect(try await store.transfers.status() == TransferStatus(
                users: 2, exported: 1, imported: 0, pending: 0, failed: 0, windowStartedAt: nil, withoutAppleID: 1))
            #expect(try await store.transfers.exported(target: Self.teamB).map(\.userID) == [apple])
            #expect(try await store.users.user(id: password)?.appleSub == nil)
        }
    }

    @Test(arguments: Engine.available)
    func theReceiverRecordsTheCSVThenMovesEachUserKeepingSessionsAndId(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let ada = try await Self.signIn(store, sub: "a-ada", token: "ada")
            let bob = try await Self.signIn(store, sub: "a-bob", token: "bob")
            _ = try await store.setExternalID(userID: bob.user.id, externalID: "crm-bob", now: 1_000)
            let cy = try await Self.signIn(store, sub: "a-cy", token: "cy")
            _ = try await store.transfers.recordExport(userID: cy.user.id, target: Self.teamB, transferSub: "ts-taken", now: 1_500)
            let dee = try await Self.signIn(store, sub: "a-dee", token: "dee")
            let before = try await Self.events(store).count

            let records = [
                TransferRecord(userID: ada.user.id, externalID: nil, transferSub: "ts-ada"),
                // A user id this database does not have, found by the team's own id.
                TransferRecord(userID: "usr_elsewhere", externalID: "crm-bob", transferSub: "ts-bob"),
                TransferRecord(userID: "usr_nobody", externalID: nil, transferSub: "ts-nobody"),
                TransferRecord(userID: dee.user.id, externalID: nil, transferSub: "ts-taken"),
            ]
            let recorded = try await store.transfers.recordImports(records, team: Self.teamB, now: 3_000, batchSize: 2)
            #expect(recorded.recorded == 2)
            #expect(recorded.unknown.map(\.userID) == ["usr_nobody"])
            #expect(recorded.conflicting.map(\.record.userID) == [dee.user.id])
            #expect(recorded.conflicting.map(\.holder) == [cy.user.id])
            #expect(try await store.vault.load(userID: dee.user.id) != nil, "a refused row changes nothing")
            // The previous team's Apple tokens go at once; sessions stay.
            #expect(try await store.vault.load(userID: ada.user.id) == nil)
            #expect(try await store.vault.load(userID: bob.user.id) == nil)
            #expect(try await store.vault.load(userID: cy.user.id) != nil, "not in the CSV")
            #expect(try await store.transfers.status() == TransferStatus(users: 4, exported: 1, imported: 0, pending: 3, failed: 0, windowStartedAt: 3_000))
            let pending = try await store.transfers.pendingImports(team: Self.teamB, after: "", limit: 10)
            #expect(Set(pending.map(\.userID)) == [ada.user.id, bob.user.id, cy.user.id], "the sender's own rows name team B too")
            #expect(pending.first { $0.userID == bob.user.id }?.externalID == "crm-bob")

            let moved = try await store.transfers.completeImport(userID: ada.user.id, transferSub: "ts-ada", newSub: "b-ada", relayEmail: "new@privaterelay.appleid.com", now: 3_100)
            guard case .moved(let after) = moved else { Issue.record("expected moved, got \(moved)"); return }
            #expect(after.id == ada.user.id)
            #expect(after.appleSub == "b-ada")
            #expect(after.email == "new@privaterelay.appleid.com" && after.isPrivateEmail && after.emailVerified)
            #expect(try await store.users.user(appleSub: "a-ada") == nil)
            #expect(try await store.sessions.authenticate(token: ada.session.token, now: 3_100, idleTTL: 86_400)?.1.appleSub == "b-ada")
            #expect(try await Self.events(store).dropFirst(before) == ["user.updated \(ada.user.id) b-ada new@privaterelay.appleid.com @3100"])
            // Done once: the same exchange again changes nothing.
            #expect(try await store.transfers.completeImport(userID: ada.user.id, transferSub: "ts-ada", newSub: "b-ada", relayEmail: nil, now: 3_200) == .notPending)
            // A second run skips what is imported.
            let again = try await store.transfers.recordImports(Array(records.prefix(2)), team: Self.teamB, now: 3_300)
            #expect(again.alreadyImported == 1 && again.recorded == 1)
            #expect(try await store.transfers.status().windowStartedAt == 3_000, "counted from the first import")

            // Bob signed in as a new user before his transfer_sub was known: his new sub is taken.
            _ = try await Self.signIn(store, sub: "b-bob", token: "bob-new", now: 3_400)
            let refused = try await store.transfers.completeImport(userID: bob.user.id, transferSub: "ts-bob", newSub: "b-bob", relayEmail: nil, now: 3_500)
            guard case .subTaken = refused else { Issue.record("expected subTaken, got \(refused)"); return }
            #expect(try await store.users.user(id: bob.user.id)?.appleSub == "a-bob", "nothing moved")
            try await store.transfers.recordImportFailure(userID: cy.user.id, error: "invalid_request", now: 3_500)
            let status = try await store.transfers.status()
            #expect(status == TransferStatus(users: 5, exported: 1, imported: 1, pending: 0, failed: 2, windowStartedAt: 3_000))
        }
    }

    @Test(arguments: Engine.available)
    func aSignInDuringTheWindowFindsItsUserByTransferSub(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let ada = try await Self.signIn(store, sub: "a-ada", token: "ada")
            _ = try await store.transfers.recordImports(
                [TransferRecord(userID: ada.user.id, externalID: nil, transferSub: "ts-ada")], team: Self.teamB, now: 2_000)
            let before = try await Self.events(store).count

            let back = try await Self.signIn(store, sub: "b-ada", token: "ada-b", transferSub: "ts-ada", now: 2_100)
            #expect(!back.created)
            #expect(back.user.id == ada.user.id)
            #expect(back.user.appleSub == "b-ada")
            #expect(try await store.sessions.authenticate(token: ada.session.token, now: 2_100, idleTTL: 86_400) != nil, "old sessions stay")
            #expect(try await store.vault.load(userID: ada.user.id)?.refreshToken == "r-ada-b", "the new team's tokens")
            #expect(try await Self.events(store).dropFirst(before) == ["user.updated \(ada.user.id) b-ada b-ada@privaterelay.appleid.com @2100"])
            let status = try await store.transfers.status()
            #expect(status.imported == 1 && status.pending == 0)
            // The import reaching Ada later finds her done.
            #expect(try await store.transfers.completeImport(userID: ada.user.id, transferSub: "ts-ada", newSub: "b-ada", relayEmail: nil, now: 2_200) == .notPending)
            #expect(try await store.transfers.pendingImports(team: Self.teamB, after: "", limit: 10).isEmpty)

            // A transfer_sub nobody here waits for: a new user, as without one.
            let stranger = try await Self.signIn(store, sub: "b-stranger", token: "s", transferSub: "ts-unknown", now: 2_300)
            #expect(stranger.created)
            // A refused sign-in moves nobody (the transaction keeps nothing).
            let cy = try await Self.signIn(store, sub: "a-cy", token: "cy")
            _ = try await store.transfers.recordImports([TransferRecord(userID: cy.user.id, externalID: nil, transferSub: "ts-cy")], team: Self.teamB, now: 2_400)
            await #expect(throws: SignInConflict.tokenReplayed) { try await Self.signIn(store, sub: "b-cy", token: "cy", transferSub: "ts-cy", now: 2_500) }
            #expect(try await store.users.user(id: cy.user.id)?.appleSub == "a-cy")
        }
    }

    /// Team B's server must not ask Apple about the refresh tokens of users still on their way
    /// to it: they are team A's, Apple refuses them to B, and the refusal would end sessions.
    @Test(arguments: Engine.available)
    func refreshValidationLeavesUsersArrivingAtThisTeamAlone(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let ada = try await Self.signIn(store, sub: "a-ada", token: "ada")
            let bob = try await Self.signIn(store, sub: "a-bob", token: "bob")
            _ = try await store.transfers.recordExport(userID: ada.user.id, target: Self.teamB, transferSub: "ts-ada", now: 1_100)
            try await store.refreshSchedule.scheduleNew(interval: 100)
            let later: Int64 = 10_000
            let asB = try await store.refreshSchedule.claimDue(now: later, idleTTL: 86_400, limit: 10, lease: 300, receivingTeam: Self.teamB)
            #expect(asB.map(\.userID) == [bob.user.id])
            // Team A (the sender) still checks its own tokens, Ada's included.
            let asA = try await store.refreshSchedule.claimDue(now: later + 1_000, idleTTL: 86_400, limit: 10, lease: 300, receivingTeam: "TEAMAAAA01")
            #expect(Set(asA.map(\.userID)) == [ada.user.id, bob.user.id])
            // Once imported (here: signed in with team B's sub), Ada is checked again.
            _ = try await Self.signIn(store, sub: "b-ada", token: "ada-b", transferSub: "ts-ada", now: 1_200)
            try await store.refreshSchedule.scheduleNew(interval: 100)
            let afterMove = try await store.refreshSchedule.claimDue(now: later + 5_000, idleTTL: 86_400, limit: 10, lease: 300, receivingTeam: Self.teamB)
            #expect(afterMove.map(\.userID).contains(ada.user.id))
        }
    }
}
