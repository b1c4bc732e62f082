import Foundation
import OpenSSLCrypto
import PostgreSQL
import SQLite
@testable import Store
import Synchronization
import Testing
import TestSupport

/// docs/guides/passwords-and-email.md's mail outbox at the Store, on both engines: messages written in their change's
/// transaction, codes sealed at rest, no code webhook while mail is on, the queue rules it
/// shares with webhooks (leases, back-off, retention, failure, requeue), the relay rule, and two
/// instances on one PostgreSQL database taking each message once.
@Suite(.timeLimit(.minutes(2)))
struct MailOutboxTests {
    /// What the store reported as not written, as `kind reason` lines.
    final class Suppressions: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
    }

    static func settings(_ suppressions: Suppressions = Suppressions()) -> MailSettings {
        MailSettings(messageIDDomain: "mail.example.com") { kind, reason in
            suppressions.lines.withLock { $0.append("\(kind) \(reason.rawValue)") }
        }
    }

    /// A store with webhooks and mail on (as with `webhook_url` and `smtp_url`).
    static func withMailStore<T>(
        _ engine: Engine, suppressions: Suppressions = Suppressions(), _ body: (Store) async throws -> T
    ) async throws -> T {
        try await withLocation(engine) { location in
            let store = try Store.open(location, connections: 2, events: PasswordStoreTests.renderer, mail: settings(suppressions)) { testDataKey }
            defer { store.close() }
            return try await body(store)
        }
    }

    static func code(_ kind: EmailCode.Kind, _ code: String, expiresAt: Int64 = 90_000) -> EmailCode {
        EmailCode(kind: kind, code: code, codeHash: SHA256.hash(code), expiresAt: expiresAt)
    }

    static func signUp(_ store: Store, _ email: String, code: String, locale: String = "en", now: Int64 = 1_000) async throws -> Store.SignedIn {
        var signUp = PasswordSignUp(email: email, hash: "$scrypt$h1", sessionTTL: 86_400, verification: Self.code(.verifyEmail, code))
        signUp.locale = locale
        signUp.deviceName = "Safari on iPhone"
        return try await store.createPasswordUser(signUp, now: now)
    }

    struct StoredMail: Equatable {
        let id: String, kind: String, recipient: String, language: String, messageID: String, body: String
    }

    static func stored(_ store: Store) async throws -> [StoredMail] {
        try await store.engine.read { connection in
            try connection.query("SELECT id, kind, recipient, language, message_id, body FROM mail_messages ORDER BY seq").map {
                StoredMail(
                    id: try $0.string("id"), kind: try $0.string("kind"), recipient: try $0.string("recipient"),
                    language: try $0.string("language"), messageID: try $0.string("message_id"), body: try $0.string("body"))
            }
        }
    }

    static func webhookTypes(_ store: Store) async throws -> [String] {
        try await store.engine.read { try $0.query("SELECT type FROM webhook_events ORDER BY seq").map { try $0.string("type") } }
    }

    @Test(arguments: Engine.available)
    func codesGoByMailSealedAtRestAndNoCodeWebhookIsEmitted(_ engine: Engine) async throws {
        try await Self.withMailStore(engine) { store in
            let verifyCode = "dmVyaWZ5LWNvZGUtZm9yLWFkYQ"
            let made = try await Self.signUp(store, "Ada@Example.com", code: verifyCode, locale: "ko")
            #expect(made.user.locale == "ko")
            let resetCode = "cmVzZXQtY29kZS1mb3ItYWRh"
            #expect(try await store.requestPasswordReset(email: "ada@example.com", code: Self.code(.passwordReset, resetCode), now: 1_100) == .issued)

            #expect(try await Self.webhookTypes(store) == ["user.created"], "with mail on, no webhook carries a code")
            let rows = try await Self.stored(store)
            #expect(rows.map(\.kind) == ["verify_email", "password_reset"])
            #expect(rows.allSatisfy { $0.recipient == "ada@example.com" && $0.language == "ko" })
            #expect(rows.allSatisfy { $0.body.hasPrefix("sealed:") && !$0.body.contains(verifyCode) && !$0.body.contains(resetCode) })
            #expect(rows.allSatisfy { $0.messageID.hasPrefix($0.id) && $0.messageID.hasSuffix("@mail.example.com") })

            let claimed = try await store.mail.claimDue(now: 1_100, lease: 60, limit: 10)
            #expect(claimed.map(\.values) == [
                ["code": verifyCode, "expires_at": "90000"], ["code": resetCode, "expires_at": "90000"],
            ])
            #expect(claimed.map(\.messageID) == rows.map(\.messageID))
            #expect(claimed.map(\.userID) == [made.user.id, made.user.id])
            #expect(claimed.allSatisfy { $0.createdAt >= 1_000 && $0.attempts == 0 })
        }
    }

    /// The code is nowhere in the database file's bytes (nor its write-ahead log) while its
    /// message waits.
    @Test func theCodeIsNotInTheDatabaseFile() async throws {
        try await withTemporaryFolder { folder in
            let path = folder + "/siwa.sqlite3"
            let code = "c2VjcmV0LWNvZGUtaW4tdGhlLWZpbGU"
            let store = try Store.open(path, connections: 2, mail: Self.settings()) { testDataKey }
            _ = try await Self.signUp(store, "ada@example.com", code: code)
            #expect(try await store.mail.depth().count == 1)
            store.close()
            for file in [path, path + "-wal"] {
                guard let bytes = FileManager.default.contents(atPath: file) else { continue }
                #expect(bytes.range(of: Data(code.utf8)) == nil, "\(file) holds the code")
                #expect(bytes.range(of: Data("ada@example.com".utf8)) != nil || file.hasSuffix("-wal"), "the check reads the right file")
            }
        }
    }

    @Test(arguments: Engine.available)
    func aFailedChangeWritesNoMail(_ engine: Engine) async throws {
        try await Self.withMailStore(engine) { store in
            _ = try await Self.signUp(store, "ada@example.com", code: "first")
            await #expect(throws: PasswordAccountConflict.accountExists) {
                _ = try await Self.signUp(store, "ADA@example.com", code: "second")
            }
            #expect(try await Self.stored(store).count == 1)
            #expect(try await store.requestPasswordReset(email: "nobody@example.com", code: Self.code(.passwordReset, "x"), now: 1_000) == .notNeeded)
            #expect(try await Self.stored(store).count == 1)
        }
    }

    @Test(arguments: Engine.available)
    func withoutMailCodesStillGoByWebhookAndNoMailIsWritten(_ engine: Engine) async throws {
        try await PasswordStoreTests.withStore(engine) { store in
            _ = try await Self.signUp(store, "ada@example.com", code: "first")
            #expect(try await Self.webhookTypes(store) == ["user.created", "user.email_verification_requested"])
            #expect(try await store.mail.depth().count == 0)
        }
    }

    /// Apple drops mail to a relay address whose forwarding is off: not written, reported.
    @Test(arguments: Engine.available)
    func mailToARelayAddressIsWrittenOnlyWhileForwardingIsEnabled(_ engine: Engine) async throws {
        let suppressions = Suppressions()
        try await Self.withMailStore(engine, suppressions: suppressions) { store in
            let id = try await store.engine.write { connection in
                try UserStore.upsertOnSignIn(
                    in: connection,
                    identity: VerifiedIdentity(appleSub: "relay.1", email: "x1@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true),
                    profile: nil, now: 1_000
                ).user.id
            }
            func enqueue() async throws -> Bool {
                try await store.engine.write { connection in
                    try store.outbox.mail.enqueue(
                        "security_notice", to: try Store.existingUser(id, in: connection), values: ["change": "password_set"], now: 1_000,
                        in: connection)
                }
            }
            func forwarding(_ value: String) async throws {
                try await store.engine.write { _ = try $0.run("UPDATE users SET email_forwarding = ? WHERE id = ?", [.text(value), .text(id)]) }
            }
            // A relay address starts forwarding (docs/reference/http-api.md): written.
            #expect(try await enqueue())
            try await forwarding("disabled")
            #expect(try await enqueue() == false)
            #expect(try await enqueue() == false)
            #expect(try await Self.stored(store).map(\.recipient) == ["x1@privaterelay.appleid.com"], "nothing more written")
            #expect(suppressions.all == ["security_notice relay_disabled", "security_notice relay_disabled"])
            try await forwarding("enabled")
            #expect(try await enqueue())
            #expect(try await Self.stored(store).count == 2)
            #expect(suppressions.all.count == 2)
        }
    }

    @Test(arguments: Engine.available)
    func retriesBackOffWithinTheRetentionAPermanentRefusalFailsAtOnceAndRetryQueuesAgain(_ engine: Engine) async throws {
        try await Self.withMailStore(engine) { store in
            _ = try await Self.signUp(store, "ada@example.com", code: "a", now: 100)
            _ = try await Self.signUp(store, "bob@example.com", code: "b", now: 100)
            let queue = store.mail
            let claimed = try await queue.claimDue(now: 100, lease: 30, limit: 10)
            #expect(claimed.count == 2)
            #expect(try await queue.claimDue(now: 129, lease: 30, limit: 10).isEmpty, "leased")
            #expect(try await queue.hasDue(now: 129) == false)

            let (ada, bob) = (claimed[0], claimed[1])
            #expect(try await queue.recordFailure(ada, error: "RCPT 451", now: 110, retryDelay: 5, retention: 1_000) == .retrying(at: 115))
            #expect(try await queue.recordFailure(bob, error: "RCPT 550", now: 110, retryDelay: 5, retention: 1_000, permanent: true) == .failed)
            let again = try await queue.claimDue(now: 115, lease: 30, limit: 10)
            #expect(again.map(\.id) == [ada.id] && again.first?.attempts == 1)
            #expect(again.first?.messageID == ada.messageID, "the same message on every attempt")
            #expect(try await queue.recordFailure(again[0], error: "connection refused", now: 1_100, retryDelay: 5, retention: 1_000) == .failed)

            let failed = try await queue.failed()
            #expect(failed.map(\.id) == [ada.id, bob.id].sorted { a, _ in a == ada.id })
            #expect(Set(failed.map(\.lastError)) == ["connection refused", "RCPT 550"])
            #expect(failed.allSatisfy { $0.recipient.hasSuffix("@example.com") && $0.kind == "verify_email" })
            #expect(try await queue.depth().count == 0)

            let listed = try await MailQueue.withQueue(at: try Self.location(of: store)) { try await $0.failed() }
            #expect(listed == failed)
            #expect(try await queue.requeue(id: bob.id, now: 1_200))
            #expect(try await queue.requeue(id: bob.id, now: 1_200) == false)
            #expect(try await queue.requeueAll(now: 1_200) == 1)
            let requeued = try await queue.claimDue(now: 1_200, lease: 30, limit: 10)
            #expect(Set(requeued.map(\.id)) == [ada.id, bob.id] && requeued.allSatisfy { $0.attempts == 0 })
            #expect(requeued.first { $0.id == ada.id }?.values["code"] == "a", "values open again after a requeue")
            try await queue.markDelivered(id: ada.id)
            #expect(try await queue.depth().count == 1)
        }
    }

    /// Not ordered per user: a message in back-off holds back none of the user's later ones.
    @Test(arguments: Engine.available)
    func aUsersMessagesDoNotWaitForEachOther(_ engine: Engine) async throws {
        try await Self.withMailStore(engine) { store in
            _ = try await Self.signUp(store, "ada@example.com", code: "a", now: 100)
            let first = try #require(try await store.mail.claimDue(now: 100, lease: 30, limit: 10).first)
            _ = try await store.requestPasswordReset(email: "ada@example.com", code: Self.code(.passwordReset, "r"), now: 101)
            #expect(try await store.mail.claimDue(now: 101, lease: 30, limit: 10).map(\.kind) == ["password_reset"])
            #expect(first.kind == "verify_email")
        }
    }

    /// What the messages waiting say, as `kind to change device` lines (opened, oldest first).
    static func notices(_ store: Store, now: Int64) async throws -> [String] {
        try await store.mail.claimDue(now: now, lease: 0, limit: 100).map {
            [$0.kind, $0.recipient, $0.values["change"] ?? "-", $0.values["device"] ?? "-"].joined(separator: " ")
        }
    }

    /// docs/guides/passwords-and-email.md: a security notice for each change of a way in, to a proven email, written
    /// with its change (a refused change writes none); `account_deleted` after the account is
    /// deleted, to the email it had.
    @Test(arguments: Engine.available)
    func securityChangesAndTheDeletionAreMailedToAProvenEmail(_ engine: Engine) async throws {
        try await Self.withMailStore(engine) { store in
            let made = try await Self.signUp(store, "ada@example.com", code: "v", now: 1_000)
            let (id, session) = (made.user.id, made.session.record.id)
            // Unproven, the address gets its code and nothing else.
            _ = try await store.setPassword(userID: id, checkedHash: "$scrypt$h1", newHash: "h2", keptSessionID: session, attempts: nil, now: 1_100)
            #expect(try await Self.notices(store, now: 1_100) == ["verify_email ada@example.com - -"])
            _ = try await store.verifyEmail(codeHash: SHA256.hash("v"), now: 1_200)
            try await store.mail.markDelivered(id: try #require(try await store.mail.claimDue(now: 1_200, lease: 0, limit: 1).first).id)

            _ = try await store.setPassword(userID: id, checkedHash: "h2", newHash: "h3", keptSessionID: session, attempts: nil, now: 1_300)
            await #expect(throws: PasswordAccountConflict.passwordChanged) {
                _ = try await store.setPassword(userID: id, checkedHash: "wrong", newHash: "h4", keptSessionID: session, attempts: nil, now: 1_310)
            }
            var write = PasswordStoreTests.appleWrite(sub: "001.ada", token: "t1", now: 1_400)
            write.deviceName = "iPhone"
            _ = try await store.bindAppleID(AppleBinding(userID: id, write: write, makesSession: false), now: 1_400)
            _ = try await store.unbindAppleID(userID: id, sessionID: session, now: 1_500, firstAttemptAt: 1_500)
            _ = try await store.bindAppleID(AppleBinding(userID: id, write: PasswordStoreTests.appleWrite(sub: "001.ada", token: "t2", now: 1_600), makesSession: false), now: 1_600)
            _ = try await store.removePassword(userID: id, sessionID: session, now: 1_700)
            #expect(try await Self.notices(store, now: 1_700) == [
                "security_notice ada@example.com password_changed Safari on iPhone",
                "security_notice ada@example.com apple_linked iPhone",
                "security_notice ada@example.com apple_unlinked Safari on iPhone",
                "security_notice ada@example.com apple_linked iPhone",
                "security_notice ada@example.com password_removed Safari on iPhone",
            ])
            let whens = try await store.mail.claimDue(now: 1_700, lease: 0, limit: 100).map { $0.values["when"] }
            #expect(whens == ["1300", "1400", "1500", "1600", "1700"])

            _ = try await store.deleteUser(userID: id, now: 1_800, firstAttemptAt: 1_800)
            let last = try #require(try await store.mail.claimDue(now: 1_800, lease: 0, limit: 100).last)
            #expect(last.kind == "account_deleted" && last.recipient == "ada@example.com" && last.values == ["when": "1800"])
            #expect(last.userID == id)
        }
    }

    @Test(arguments: Engine.available)
    func aResetIsNoticedWithoutADevice(_ engine: Engine) async throws {
        try await Self.withMailStore(engine) { store in
            _ = try await Self.signUp(store, "ada@example.com", code: "v", now: 1_000)
            _ = try await store.requestPasswordReset(email: "ada@example.com", code: Self.code(.passwordReset, "r"), now: 1_000)
            _ = try await store.resetPassword(codeHash: SHA256.hash("r"), newHash: "h2", now: 1_100)
            #expect(try await Self.notices(store, now: 1_100).last == "security_notice ada@example.com password_reset —")
            // The admin's deletion is not the person's: no account_deleted.
            let id = try #require(try await store.passwordCredential(email: "ada@example.com")?.userID)
            _ = try await store.deleteUser(userID: id, reason: .admin, now: 1_200, firstAttemptAt: 1_200)
            #expect(try await Self.notices(store, now: 1_200).count == 3)
        }
    }

    @Test(arguments: Engine.available)
    func theLocaleIsSetAndChanged(_ engine: Engine) async throws {
        try await Self.withMailStore(engine) { store in
            let made = try await Self.signUp(store, "ada@example.com", code: "v", locale: "ko", now: 1_000)
            #expect(try await store.users.user(id: made.user.id)?.locale == "ko")
            #expect(try await store.setLocale(userID: made.user.id, locale: "en", now: 1_100)?.locale == "en")
            #expect(try await store.users.user(id: made.user.id)?.updatedAt == 1_100)
            #expect(try await store.setLocale(userID: "usr_none", locale: "en", now: 1_100) == nil)
            var write = PasswordStoreTests.appleWrite(sub: "002.kim", token: "t1")
            write.locale = "ko"
            #expect(try await store.completeSignIn(write, now: 1_000).user.locale == "ko")
            // The schema holds the two languages only.
            await #expect(throws: (any Error).self) { _ = try await store.setLocale(userID: made.user.id, locale: "fr", now: 1_200) }
            #expect(try await store.users.user(id: made.user.id)?.locale == "en")
        }
    }

    /// Two instances on one database: concurrent claims take each message once.
    @Test func twoPostgresInstancesTakeEachMessageOnce() async throws {
        guard Engine.available.contains(.postgres) else { return }
        let url = try await PostgresCluster.shared().makeDatabase()
        let first = try Store.open(url, connections: 4, mail: Self.settings()) { testDataKey }
        defer { first.close() }
        let second = try Store.open(url, connections: 4, mail: Self.settings()) { testDataKey }
        defer { second.close() }
        for index in 0..<40 { _ = try await Self.signUp(first, "u\(index)@example.com", code: "c\(index)", now: 100) }
        let claims = try await withThrowingTaskGroup(of: [QueuedMail].self) { group in
            for index in 0..<8 {
                let store = index % 2 == 0 ? first : second
                group.addTask { try await store.mail.claimDue(now: 200, lease: 60, limit: 7) }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(claims.map(\.id)).count == claims.count, "no message taken twice")
        #expect(claims.count == 40)
    }

    static func location(of store: Store) throws -> String {
        if let database = store.database { return database.path }
        return try #require((store.engine as? PostgresEngine)?.url)
    }
}
