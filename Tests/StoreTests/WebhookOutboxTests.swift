import Foundation
import OpenSSLCrypto
import SQLite
@testable import Store
import Testing
import TestSupport

/// docs/guides/connecting-your-backend.md: every change to a user appends its event in the change's own transaction, so a
/// change that fails emits nothing and a committed one always emits. Both engines.
@Suite(.timeLimit(.minutes(2)))
struct WebhookOutboxTests {
    /// A renderer that writes what it was given, so a test can read back type, user and reason.
    static let renderer = WebhookEventRenderer { type, data, now in
        switch data {
        case .user(let user): "\(type.rawValue) \(user.id) \(user.email ?? "-") \(user.externalID ?? "-") \(user.appleCredential.rawValue) @\(now)"
        case .deleted(let user, let reason): "\(type.rawValue) \(user.id) \(reason.rawValue) @\(now)"
        case .passwordResetRequested(let id, let email, let code, let expiresAt), .emailVerificationRequested(let id, let email, let code, let expiresAt):
            "\(type.rawValue) \(id) \(email) \(code) until \(expiresAt) @\(now)"
        case .sessionCreated(let session, let method): "\(type.rawValue) \(session.userID) \(method.rawValue) @\(now)"
        case .sessionEnded(_, let userID, let reason): "\(type.rawValue) \(userID) \(reason.rawValue) @\(now)"
        }
    }

    static func withStore(_ engine: Engine, _ body: (Store) async throws -> Void) async throws {
        try await StoreTests.withStore(engine, events: renderer, body)
    }

    /// The outbox's bodies in order.
    static func events(_ store: Store) async throws -> [String] { try await outboxBodies(store) }

    static func signIn(_ store: Store, sub: String, token: String, email: String? = nil, now: Int64) async throws -> Store.SignedIn {
        let write = SignInWrite(
            identity: VerifiedIdentity(appleSub: sub, email: email ?? "\(sub)@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: email == nil),
            tokenHash: SHA256.hash(token), tokenExpiresAt: now + 600, sessionTTL: 86_400)
        return try await store.completeSignIn(write, now: now)
    }

    @Test(arguments: Engine.available)
    func signInsEmitCreatedThenUpdatedOnlyWhenSomethingVisibleChanged(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let first = try await Self.signIn(store, sub: "s1", token: "t1", now: 100)
            let id = first.user.id
            #expect(try await Self.events(store) == ["user.created \(id) s1@privaterelay.appleid.com - authorized @100"])

            // The same facts again: a session, but no event.
            _ = try await Self.signIn(store, sub: "s1", token: "t2", now: 200)
            #expect(try await Self.events(store).count == 1)

            // A new email from the token is a visible change.
            _ = try await Self.signIn(store, sub: "s1", token: "t3", email: "ada@example.com", now: 300)
            #expect(try await Self.events(store).last == "user.updated \(id) ada@example.com - authorized @300")

            // A replayed token fails the whole transaction: no session, no event.
            await #expect(throws: SignInConflict.tokenReplayed) { try await Self.signIn(store, sub: "s1", token: "t3", now: 400) }
            #expect(try await Self.events(store).count == 2)
        }
    }

    @Test(arguments: Engine.available)
    func notificationsEmitOncePerAppliedChange(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let id = try await Self.signIn(store, sub: "s2", token: "t1", now: 100).user.id
            _ = try await store.applyNotification([AccountEvent(kind: .emailDisabled, subject: "s2")], jti: "j1", now: 110)
            // A redelivery changes nothing and emits nothing; so does an event for nobody.
            _ = try await store.applyNotification([AccountEvent(kind: .emailDisabled, subject: "s2")], jti: "j1", now: 111)
            _ = try await store.applyNotification([AccountEvent(kind: .consentRevoked, subject: "nobody")], jti: "j2", now: 112)
            _ = try await store.applyNotification([AccountEvent(kind: .consentRevoked, subject: "s2")], jti: "j3", now: 120)
            _ = try await store.applyNotification([AccountEvent(kind: .accountDeleted, subject: "s2")], jti: "j4", now: 130)
            #expect(try await Self.events(store) == [
                "user.created \(id) s2@privaterelay.appleid.com - authorized @100",
                "user.updated \(id) s2@privaterelay.appleid.com - authorized @110",
                "user.consent_revoked \(id) s2@privaterelay.appleid.com - revoked @120",
                "user.deleted \(id) apple_account_deleted @130",
            ])
        }
    }

    @Test(arguments: Engine.available)
    func deletionAndExternalIDsEmitAndAConflictEmitsNothing(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let ada = try await Self.signIn(store, sub: "s3", token: "t1", now: 100).user.id
            let bob = try await Self.signIn(store, sub: "s4", token: "t2", now: 100).user.id

            #expect(try await store.setExternalID(userID: ada, externalID: "crm-1", now: 200)?.externalID == "crm-1")
            // Setting the value it already has is no change.
            #expect(try await store.setExternalID(userID: ada, externalID: "crm-1", now: 201)?.externalID == "crm-1")
            await #expect(throws: ExternalIDTaken()) { try await store.setExternalID(userID: bob, externalID: "crm-1", now: 202) }
            #expect(try await store.users.user(id: bob)?.externalID == nil)
            #expect(try await store.setExternalID(userID: "usr_unknown", externalID: "crm-9", now: 203) == nil)

            _ = try await store.deleteUser(userID: ada, reason: .admin, now: 300, firstAttemptAt: 303)
            _ = try await store.deleteUser(userID: bob, now: 310, firstAttemptAt: 313)
            // Deleting a user that is gone emits nothing more.
            _ = try await store.deleteUser(userID: bob, now: 320, firstAttemptAt: 323)
            let events = try await Self.events(store)
            #expect(events.count == 5)
            #expect(events[2] == "user.updated \(ada) s3@privaterelay.appleid.com crm-1 authorized @200")
            #expect(events[3] == "user.deleted \(ada) admin @300")
            #expect(events[4] == "user.deleted \(bob) account_deleted @310")
        }
    }

    @Test func withoutARendererNothingIsAppended() async throws {
        try await withTemporaryFolder { folder in
            let store = try Store.open(folder + "/siwa.sqlite3", connections: 2) { [UInt8](repeating: 1, count: 32) }
            defer { store.close() }
            _ = try await Self.signIn(store, sub: "s5", token: "t1", now: 100)
            #expect(try await Self.events(store).isEmpty)
        }
    }
}
