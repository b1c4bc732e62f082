import Foundation
import OpenSSLCrypto
import PostgreSQL
import SQLite
@testable import Store
import Testing
import TestSupport

/// docs/guides/passwords-and-email.md at the Store: password accounts, attempt limits, reset codes, binding and unbinding
/// Apple IDs, and no silent merges, each operation one transaction, on both engines.
@Suite(.timeLimit(.minutes(2)))
struct PasswordStoreTests {
    /// A renderer that writes what it was given (as in WebhookOutboxTests).
    static let renderer = WebhookEventRenderer { type, data, now in
        switch data {
        case .user(let user): "\(type.rawValue) \(user.id) \(user.appleSub ?? "-") \(user.signInMethods.joined(separator: "+")) @\(now)"
        case .deleted(let user, let reason): "\(type.rawValue) \(user.id) \(reason.rawValue) @\(now)"
        case .passwordResetRequested(let id, let email, let code, let expiresAt), .emailVerificationRequested(let id, let email, let code, let expiresAt):
            "\(type.rawValue) \(id) \(email) \(code) \(expiresAt) @\(now)"
        case .sessionCreated(let session, let method): "\(type.rawValue) \(session.userID) \(method.rawValue) @\(now)"
        case .sessionEnded(_, let userID, let reason): "\(type.rawValue) \(userID) \(reason.rawValue) @\(now)"
        }
    }

    static func withStore(_ engine: Engine, _ body: (Store) async throws -> Void) async throws {
        try await StoreTests.withStore(engine, events: renderer, body)
    }

    static func events(_ store: Store) async throws -> [String] { try await outboxBodies(store) }

    static func signUp(_ store: Store, _ email: String, hash: String = "$scrypt$h1", now: Int64 = 1_000) async throws -> Store.SignedIn {
        let verification = EmailCode(kind: .verifyEmail, code: "v-\(email)", codeHash: SHA256.hash("v-\(email)"), expiresAt: now + 86_400)
        var signUp = PasswordSignUp(email: email, hash: hash, sessionTTL: 86_400, verification: verification)
        signUp.givenName = "Ada"
        return try await store.createPasswordUser(signUp, now: now)
    }

    static func appleWrite(sub: String, token: String, email: String? = nil, verified: Bool = true, relay: Bool = false, now: Int64 = 1_000) -> SignInWrite {
        var write = SignInWrite(
            identity: VerifiedIdentity(appleSub: sub, email: email, emailVerified: verified, isPrivateEmail: relay),
            tokenHash: SHA256.hash(token), tokenExpiresAt: now + 600, sessionTTL: 86_400)
        write.deviceName = "iPhone"
        return write
    }

    /// Marks the password's email proven, as its verification code would (docs/guides/passwords-and-email.md).
    static func prove(_ store: Store, _ email: String) async throws {
        try await store.engine.write { _ = try $0.run("UPDATE password_credentials SET email_verified = 1 WHERE email = ?", [.text(email)]) }
    }

    static func count(_ store: Store, _ table: String) async throws -> Int {
        try await store.engine.read { try $0.queryOne("SELECT COUNT(*) FROM \(table)")?.int(0) ?? -1 }
    }

    // MARK: - Sign-up and sign-in

    @Test(arguments: Engine.available)
    func aPasswordAccountHasNoAppleIDAndItsEmailIsTakenWhateverItsCase(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let made = try await Self.signUp(store, "  Ada@Example.com ")
            #expect(made.created)
            #expect(made.user.appleSub == nil)
            #expect(made.user.hasPassword)
            #expect(made.user.signInMethods == ["password"])
            #expect(made.user.email == "Ada@Example.com")
            #expect(!made.user.emailVerified)
            #expect(made.user.givenName == "Ada")
            let credential = try #require(try await store.passwordCredential(email: "ADA@example.COM"))
            #expect(credential.email == "ada@example.com")
            #expect(credential.userID == made.user.id)
            #expect(credential.hash == "$scrypt$h1")
            // The session authenticates and carries the user with its methods.
            let found = try #require(try await store.sessions.authenticate(token: made.session.token, now: 1_001, idleTTL: 3_600))
            #expect(found.1.signInMethods == ["password"])

            await #expect(throws: PasswordAccountConflict.accountExists) { try await Self.signUp(store, "ada@EXAMPLE.com") }
            #expect(try await Self.count(store, "users") == 1)
            #expect(try await Self.events(store) == [
                "user.created \(made.user.id) - password @1000",
                "user.email_verification_requested \(made.user.id) ada@example.com v-  Ada@Example.com  87400 @1000",
            ])
        }
    }

    @Test(arguments: Engine.available)
    func theVerifiedEmailOfAnAppleUserIsTakenButARelayOrUnverifiedOneIsNot(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            _ = try await store.completeSignIn(Self.appleWrite(sub: "s1", token: "t1", email: "Bob@Example.com"), now: 1_000)
            await #expect(throws: PasswordAccountConflict.accountExists) { try await Self.signUp(store, "bob@example.com") }
            _ = try await store.completeSignIn(Self.appleWrite(sub: "s2", token: "t2", email: "cy@privaterelay.appleid.com", relay: true), now: 1_000)
            _ = try await store.completeSignIn(Self.appleWrite(sub: "s3", token: "t3", email: "dee@example.com", verified: false), now: 1_000)
            _ = try await Self.signUp(store, "cy@privaterelay.appleid.com")
            _ = try await Self.signUp(store, "dee@example.com")
        }
    }

    @Test(arguments: Engine.available)
    func aSignInChecksTheHashItVerifiedAndStoresARehash(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let made = try await Self.signUp(store, "ada@example.com", hash: "old")
            let keys = PasswordAttempts.Keys(email: "ada@example.com", address: "a1")
            let signedIn = try await store.completePasswordSignIn(
                userID: made.user.id, checkedHash: "old", rehash: "new", attempts: keys, deviceName: "Mac", sessionTTL: 60, now: 1_100)
            #expect(!signedIn.created)
            #expect(signedIn.session.record.deviceName == "Mac")
            #expect(try await store.passwordCredential(userID: made.user.id)?.hash == "new")
            // The password changed meanwhile: refused, no session.
            await #expect(throws: PasswordAccountConflict.passwordChanged) {
                try await store.completePasswordSignIn(
                    userID: made.user.id, checkedHash: "old", rehash: nil, attempts: keys, deviceName: nil, sessionTTL: 60, now: 1_200)
            }
            #expect(try await store.sessions.list(userID: made.user.id, now: 1_150).count == 2)
        }
    }

    // MARK: - Attempts

    @Test(arguments: Engine.available)
    func fiveFailuresForAnEmailOrTwentyFromAnAddressAreTheLimit(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let ada = PasswordAttempts.Keys(email: "ada@example.com", address: "a1")
            for _ in 0..<5 { #expect(try await store.reservePasswordAttempt(ada, now: 1_000) == .allowed) }
            // The sixth, whatever its case, until the window (from the first failure) passes.
            let other = PasswordAttempts.Keys(email: " ADA@example.com", address: "a2")
            #expect(try await store.reservePasswordAttempt(other, now: 1_100) == .refused(retryAfter: 800))
            #expect(try await store.reservePasswordAttempt(other, now: 1_899) == .refused(retryAfter: 1))
            #expect(try await store.reservePasswordAttempt(other, now: 1_900) == .allowed)

            // A success forgets the email's failures.
            let bob = PasswordAttempts.Keys(email: "bob@example.com", address: "a3")
            for _ in 0..<4 { _ = try await store.reservePasswordAttempt(bob, now: 1_000) }
            try await store.releasePasswordAttempt(bob)
            for _ in 0..<5 { #expect(try await store.reservePasswordAttempt(bob, now: 1_000) == .allowed) }

            // Twenty failures from one address, across emails: counted as they fail, not as
            // they are tried (people behind one address signing in at once are no failures).
            for index in 0..<20 {
                let keys = PasswordAttempts.Keys(email: "u\(index)@example.com", address: "a4")
                #expect(try await store.reservePasswordAttempt(keys, now: 2_000) == .allowed)
                try await store.recordPasswordFailure(keys, now: 2_000)
            }
            #expect(try await store.reservePasswordAttempt(.init(email: "new@example.com", address: "a4"), now: 2_100) == .refused(retryAfter: 800))
            // Refused attempts count nothing: the email's counter never started.
            for _ in 0..<5 { #expect(try await store.reservePasswordAttempt(.init(email: "new@example.com", address: "a5"), now: 2_000) == .allowed) }
            // An attempt that was never checked is taken back.
            try await store.uncountPasswordAttempt(.init(email: "new@example.com", address: "a5"))
            #expect(try await store.reservePasswordAttempt(.init(email: "new@example.com", address: "a5"), now: 2_000) == .allowed)
            #expect(try await store.reservePasswordAttempt(.init(email: "new@example.com", address: "a5"), now: 2_000) != .allowed)

            // The table holds hashes only.
            let keys = try await store.engine.read { try $0.query("SELECT key FROM password_attempts").map { try $0.blob(0) } }
            #expect(keys.allSatisfy { $0.count == 32 })
            #expect(try await store.pruneExpired(now: 10_000, idleTTL: 3_600) ?? 0 >= keys.count)
            #expect(try await Self.count(store, "password_attempts") == 0)
        }
    }

    @Test(arguments: Engine.available)
    func concurrentGuessesCannotSlipPastTheLimit(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let keys = PasswordAttempts.Keys(email: "ada@example.com", address: nil)
            let outcomes = try await withThrowingTaskGroup(of: PasswordAttempts.Check.self) { group in
                for _ in 0..<12 { group.addTask { try await store.reservePasswordAttempt(keys, now: 1_000) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .allowed }.count == 5)
        }
    }

    // MARK: - Changing, resetting, removing

    @Test(arguments: Engine.available)
    func aFirstPasswordIsAnUpdateAndOtherSessionsEnd(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let apple = try await store.completeSignIn(Self.appleWrite(sub: "s1", token: "t1", email: "ada@example.com"), now: 1_000)
            let other = try await store.completeSignIn(Self.appleWrite(sub: "s1", token: "t2"), now: 1_000)
            let user = try await store.setPassword(
                userID: apple.user.id, checkedHash: nil, newHash: "h1", keptSessionID: apple.session.record.id, attempts: nil, now: 1_100)
            #expect(user.signInMethods == ["apple", "password"])
            #expect(try await store.passwordCredential(email: "ADA@example.com")?.userID == apple.user.id)
            #expect(try await store.sessions.authenticate(token: other.session.token, now: 1_101, idleTTL: 3_600) == nil)
            #expect(try await store.sessions.authenticate(token: apple.session.token, now: 1_101, idleTTL: 3_600)?.1.hasPassword == true)

            // A change must name the hash it checked; it emits nothing (no visible change).
            await #expect(throws: PasswordAccountConflict.passwordChanged) {
                try await store.setPassword(
                    userID: apple.user.id, checkedHash: "other", newHash: "h2", keptSessionID: apple.session.record.id, attempts: nil, now: 1_200)
            }
            _ = try await store.setPassword(
                userID: apple.user.id, checkedHash: "h1", newHash: "h2", keptSessionID: apple.session.record.id, attempts: nil, now: 1_200)
            #expect(try await store.passwordCredential(userID: apple.user.id)?.hash == "h2")
            #expect(try await Self.events(store) == [
                "user.created \(apple.user.id) s1 apple @1000",
                "user.updated \(apple.user.id) s1 apple+password @1100",
            ])

            // An account with no email cannot have a password.
            let mute = try await store.completeSignIn(Self.appleWrite(sub: "s2", token: "t3"), now: 1_000)
            await #expect(throws: PasswordAccountConflict.noEmail) {
                try await store.setPassword(
                    userID: mute.user.id, checkedHash: nil, newHash: "h", keptSessionID: mute.session.record.id, attempts: nil, now: 1_300)
            }
        }
    }

    @Test(arguments: Engine.available)
    func resetCodesAreStoredAsHashesAndWorkOnceWithinThirtyMinutes(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let made = try await Self.signUp(store, "ada@example.com")
            let other = try await store.completePasswordSignIn(
                userID: made.user.id, checkedHash: "$scrypt$h1", rehash: nil, attempts: .init(email: "ada@example.com", address: nil),
                deviceName: nil, sessionTTL: 86_400, now: 1_001)
            #expect(try await store.requestPasswordReset(email: "nobody@example.com", code: EmailCode(kind: .passwordReset, code: "c0", codeHash: SHA256.hash("c0"), expiresAt: 2_800), now: 1_000) == .notNeeded)
            #expect(try await store.requestPasswordReset(email: "ADA@example.com", code: EmailCode(kind: .passwordReset, code: "code-1", codeHash: SHA256.hash("code-1"), expiresAt: 2_800), now: 1_000) == .issued)
            #expect(try await Self.events(store).last == "user.password_reset_requested \(made.user.id) ada@example.com code-1 2800 @1000")
            let stored = try await store.engine.read { try $0.query("SELECT code_hash FROM password_reset_codes").map { try $0.blob(0) } }
            #expect(stored == [SHA256.hash("code-1")])

            #expect(try await store.passwordResetTarget(codeHash: SHA256.hash("code-1"), now: 2_799)?.email == "ada@example.com")
            #expect(try await store.passwordResetTarget(codeHash: SHA256.hash("code-1"), now: 2_800) == nil)
            #expect(try await store.passwordResetTarget(codeHash: SHA256.hash("wrong"), now: 1_000) == nil)

            // Expired: used up, nothing set.
            #expect(try await store.resetPassword(codeHash: SHA256.hash("code-1"), newHash: "h2", now: 2_800) == nil)
            #expect(try await store.passwordCredential(userID: made.user.id)?.hash == "$scrypt$h1")
            #expect(try await store.resetPassword(codeHash: SHA256.hash("code-1"), newHash: "h2", now: 1_500) == nil)

            _ = try await store.requestPasswordReset(email: "ada@example.com", code: EmailCode(kind: .passwordReset, code: "code-2", codeHash: SHA256.hash("code-2"), expiresAt: 2_900), now: 1_100)
            _ = try await store.requestPasswordReset(email: "ada@example.com", code: EmailCode(kind: .passwordReset, code: "code-3", codeHash: SHA256.hash("code-3"), expiresAt: 2_900), now: 1_100)
            let user = try #require(try await store.resetPassword(codeHash: SHA256.hash("code-2"), newHash: "h3", now: 1_200))
            #expect(user.id == made.user.id)
            #expect(try await store.passwordCredential(userID: made.user.id)?.hash == "h3")
            // Every session ended, and every other code with them.
            #expect(try await store.sessions.list(userID: made.user.id, now: 1_200).isEmpty)
            #expect(try await store.sessions.authenticate(token: other.session.token, now: 1_201, idleTTL: 3_600) == nil)
            #expect(try await store.resetPassword(codeHash: SHA256.hash("code-2"), newHash: "h4", now: 1_300) == nil)
            #expect(try await store.resetPassword(codeHash: SHA256.hash("code-3"), newHash: "h4", now: 1_300) == nil)
            #expect(try await store.passwordCredential(userID: made.user.id)?.hash == "h3")
        }
    }

    /// The code is a credential: while its event waits in the outbox, the row holds it sealed
    /// with `data_key`, and delivery gets the body as rendered. Sealed under another key, the
    /// event fails at once with the reason, and the user's next event goes on.
    @Test(arguments: Engine.available)
    func aResetCodeWaitsInTheOutboxSealed(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let made = try await Self.signUp(store, "ada@example.com")
            let code = "Zm9yIHRoZSByZXNldCBjb2RlIHRlc3Q"
            #expect(try await store.requestPasswordReset(email: "ada@example.com", code: EmailCode(kind: .passwordReset, code: code, codeHash: SHA256.hash(code), expiresAt: 2_800), now: 1_000) == .issued)
            let rows = try await store.engine.read { connection in
                try connection.query("SELECT id, type, body FROM webhook_events ORDER BY seq").map {
                    (id: try $0.string("id"), type: try $0.string("type"), body: try $0.string("body"))
                }
            }
            let reset = try #require(rows.last)
            #expect(reset.type == "user.password_reset_requested")
            #expect(reset.body.hasPrefix("sealed:") && !reset.body.contains(code) && !reset.body.contains("ada@example.com"))
            #expect(rows.first?.body.hasPrefix("user.created") == true, "bodies without a secret stay as rendered")

            // Moved to another event's row, the sealed body does not open.
            #expect(WebhookBodySeal.open(reset.body, id: rows[0].id, with: store.outbox.cipher) == nil)

            // Delivery (the user's created event first) gets the rendered body.
            let created = try await store.webhooks.claimDue(now: 1_000, lease: 60, limit: 10)
            #expect(created.map(\.type) == ["user.created"])
            try await store.webhooks.markDelivered(id: created[0].id)
            let verification = try await store.webhooks.claimDue(now: 1_000, lease: 60, limit: 10)
            #expect(verification.map(\.type) == ["user.email_verification_requested"])
            try await store.webhooks.markDelivered(id: verification[0].id)
            let claimed = try await store.webhooks.claimDue(now: 1_000, lease: 60, limit: 10)
            #expect(claimed.map(\.body) == ["user.password_reset_requested \(made.user.id) ada@example.com \(code) 2800 @1000"])

            // Another data_key: failed at once, with the reason; the next event is not held back.
            _ = try await store.requestPasswordReset(email: "ada@example.com", code: EmailCode(kind: .passwordReset, code: "code-2", codeHash: SHA256.hash("code-2"), expiresAt: 2_900), now: 1_100)
            try await store.webhooks.markDelivered(id: claimed[0].id)
            let otherKey = WebhookQueue(engine: store.engine, cipher: try AESGCM(key: [UInt8](repeating: 9, count: 32)))
            #expect(try await otherKey.claimDue(now: 1_200, lease: 60, limit: 10).isEmpty)
            let failed = try await store.webhooks.failed()
            #expect(failed.map(\.type) == ["user.password_reset_requested"] && failed.first?.lastError == WebhookQueue.unopenedError)
            #expect(try await store.webhooks.depth().count == 0)
            _ = try await store.requestPasswordReset(email: "ada@example.com", code: EmailCode(kind: .passwordReset, code: "code-3", codeHash: SHA256.hash("code-3"), expiresAt: 2_900), now: 1_300)
            let next = try await store.webhooks.claimDue(now: 1_300, lease: 60, limit: 10)
            #expect(next.map(\.body) == ["user.password_reset_requested \(made.user.id) ada@example.com code-3 2900 @1300"])
        }
    }

    @Test(arguments: Engine.available)
    func aUserKeepsAtMostFiveLiveResetCodes(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            _ = try await Self.signUp(store, "ada@example.com")
            for index in 0..<8 {
                _ = try await store.requestPasswordReset(email: "ada@example.com", code: EmailCode(kind: .passwordReset, code: "c\(index)", codeHash: SHA256.hash("c\(index)"), expiresAt: 100_000), now: 1_000 + Int64(index) * EmailCode.sendWindow)
            }
            #expect(try await Self.count(store, "password_reset_codes") == Store.maxResetCodes)
            #expect(try await store.passwordResetTarget(codeHash: SHA256.hash("c0"), now: 40_000) == nil)
            #expect(try await store.passwordResetTarget(codeHash: SHA256.hash("c7"), now: 40_000) != nil)
        }
    }

    // MARK: - Binding Apple IDs

    @Test(arguments: Engine.available)
    func theUpgradeBindsTheAppleIDRemovesThePasswordAndMakesASessionAtOnce(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let made = try await Self.signUp(store, "ada@example.com")
            _ = try await store.requestPasswordReset(email: "ada@example.com", code: EmailCode(kind: .passwordReset, code: "c", codeHash: SHA256.hash("c"), expiresAt: 5_000), now: 1_000)
            var write = Self.appleWrite(sub: "s1", token: "t1", email: "x@privaterelay.appleid.com", relay: true, now: 1_100)
            write.appleTokens = AppleTokenGrant(clientID: "com.example.app", refreshToken: "r1", accessToken: "a1")
            write.profile = ClientProfile(givenName: "Augusta", familyName: "King")
            let bound = try await store.bindAppleID(
                AppleBinding(userID: made.user.id, write: write, removingPassword: "$scrypt$h1", makesSession: true), now: 1_100)
            #expect(bound.user.id == made.user.id)
            #expect(bound.user.appleSub == "s1")
            #expect(bound.user.signInMethods == ["apple"])
            // The token's email wins; the name fills in only what was missing.
            #expect(bound.user.email == "x@privaterelay.appleid.com")
            #expect(bound.user.isPrivateEmail && bound.user.emailForwarding == .enabled)
            #expect(bound.user.givenName == "Ada" && bound.user.familyName == "King")
            let session = try #require(bound.session)
            #expect(try await store.sessions.authenticate(token: session.token, now: 1_101, idleTTL: 3_600)?.1.appleSub == "s1")
            #expect(try await store.passwordCredential(email: "ada@example.com") == nil)
            #expect(try await Self.count(store, "password_reset_codes") == 0)
            #expect(try await store.vault.load(userID: made.user.id)?.refreshToken == "r1")
            #expect(try await store.replay.isUsed(SHA256.hash("t1")))
            #expect(try await Self.events(store).last == "user.updated \(made.user.id) s1 apple @1100")
            // The next Sign in with Apple of that sub is the same account.
            let again = try await store.completeSignIn(Self.appleWrite(sub: "s1", token: "t2"), now: 1_200)
            #expect(again.user.id == made.user.id && !again.created)
        }
    }

    @Test(arguments: Engine.available)
    func aFailedUpgradeChangesNothing(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let ada = try await Self.signUp(store, "ada@example.com")
            let bob = try await store.completeSignIn(Self.appleWrite(sub: "s-bob", token: "t0"), now: 1_000)
            let eventsBefore = try await Self.events(store)

            // The Apple ID is Bob's: both users untouched, the token unused, no session.
            await #expect(throws: PasswordAccountConflict.appleIDInUse) {
                try await store.bindAppleID(
                    AppleBinding(userID: ada.user.id, write: Self.appleWrite(sub: "s-bob", token: "t1"), removingPassword: "$scrypt$h1", makesSession: true),
                    now: 1_100)
            }
            // The password changed since it was checked.
            await #expect(throws: PasswordAccountConflict.passwordChanged) {
                try await store.bindAppleID(
                    AppleBinding(userID: ada.user.id, write: Self.appleWrite(sub: "s-new", token: "t2"), removingPassword: "stale", makesSession: true),
                    now: 1_100)
            }
            // A replayed token.
            await #expect(throws: SignInConflict.tokenReplayed) {
                try await store.bindAppleID(
                    AppleBinding(userID: ada.user.id, write: Self.appleWrite(sub: "s-new", token: "t0"), removingPassword: "$scrypt$h1", makesSession: true),
                    now: 1_100)
            }
            #expect(try await store.users.user(id: ada.user.id) == ada.user)
            #expect(try await store.users.user(id: bob.user.id) == bob.user)
            #expect(try await store.passwordCredential(userID: ada.user.id)?.hash == "$scrypt$h1")
            #expect(try await store.users.user(appleSub: "s-new") == nil)
            #expect(try await store.replay.isUsed(SHA256.hash("t1")) == false)
            #expect(try await store.replay.isUsed(SHA256.hash("t2")) == false)
            #expect(try await store.sessions.list(userID: ada.user.id, now: 1_100).count == 1)
            #expect(try await Self.events(store) == eventsBefore)
        }
    }

    @Test(arguments: Engine.available)
    func linkingKeepsThePasswordAndAUserHasOneAppleID(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let ada = try await Self.signUp(store, "ada@example.com")
            try await Self.prove(store, "ada@example.com")
            let linked = try await store.bindAppleID(
                AppleBinding(userID: ada.user.id, write: Self.appleWrite(sub: "s1", token: "t1"), makesSession: false, sessionID: ada.session.record.id),
                now: 1_100)
            #expect(linked.session == nil)
            #expect(linked.user.signInMethods == ["apple", "password"])
            // The same Apple ID again is no change; another is refused.
            _ = try await store.bindAppleID(AppleBinding(userID: ada.user.id, write: Self.appleWrite(sub: "s1", token: "t2"), makesSession: false), now: 1_200)
            await #expect(throws: PasswordAccountConflict.otherAppleID) {
                try await store.bindAppleID(AppleBinding(userID: ada.user.id, write: Self.appleWrite(sub: "s2", token: "t3"), makesSession: false), now: 1_200)
            }
            // A link whose session has ended (signed out meanwhile) is refused.
            let bob = try await Self.signUp(store, "bob@example.com")
            _ = try await store.sessions.end(id: bob.session.record.id, userID: bob.user.id)
            await #expect(throws: PasswordAccountConflict.userGone) {
                try await store.bindAppleID(
                    AppleBinding(userID: bob.user.id, write: Self.appleWrite(sub: "s3", token: "t4"), makesSession: false, sessionID: bob.session.record.id),
                    now: 1_300)
            }
            #expect(try await store.users.user(appleSub: "s3") == nil)
        }
    }

    @Test(arguments: Engine.available)
    func unlinkingAndRemovingThePasswordNeverLeaveAUserWithoutAWayIn(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let apple = try await store.completeSignIn(
                { var write = Self.appleWrite(sub: "s1", token: "t1", email: "ada@example.com")
                  write.appleTokens = AppleTokenGrant(clientID: "com.example.app", refreshToken: "r1", accessToken: "a1")
                  return write }(), now: 1_000)
            let id = apple.user.id
            await #expect(throws: PasswordAccountConflict.lastSignInMethod) { try await store.unbindAppleID(userID: id, now: 1_100, firstAttemptAt: 1_100) }
            // Without a password, removing it is no change.
            #expect(try await store.removePassword(userID: id, now: 1_100).signInMethods == ["apple"])
            _ = try await store.setPassword(userID: id, checkedHash: nil, newHash: "h", keptSessionID: apple.session.record.id, attempts: nil, now: 1_200)

            let unlinked = try await store.unbindAppleID(userID: id, now: 1_300, firstAttemptAt: 1_300)
            #expect(unlinked.appleSub == nil)
            #expect(unlinked.signInMethods == ["password"])
            #expect(try await store.vault.load(userID: id) == nil)
            // The refresh token is queued for revocation at Apple, due at once.
            let due = try await store.revocations.due(now: 1_300)
            #expect(due.map(\.token) == ["r1"])
            #expect(due.first?.clientID == "com.example.app")
            await #expect(throws: PasswordAccountConflict.lastSignInMethod) { try await store.removePassword(userID: id, now: 1_400) }
            // Unlinked, the Apple ID signs in as a new account (it belongs to nobody now).
            let fresh = try await store.completeSignIn(Self.appleWrite(sub: "s1", token: "t2"), now: 1_500)
            #expect(fresh.created && fresh.user.id != id)
            #expect(try await Self.events(store).suffix(2) == [
                "user.updated \(id) - password @1300", "user.created \(fresh.user.id) s1 apple @1500",
            ])
        }
    }

    /// A user with both sign-in methods: a password ("$scrypt$h1") and Apple ID `sub`.
    static func userWithBothMethods(_ store: Store, round: Int) async throws -> (user: UserRecord, sub: String) {
        let made = try await Self.signUp(store, "both\(round)@example.com")
        // Only a proven email may carry an Apple ID (docs/guides/passwords-and-email.md).
        try await Self.prove(store, "both\(round)@example.com")
        let sub = "s-both-\(round)"
        let linked = try await store.bindAppleID(
            AppleBinding(userID: made.user.id, write: Self.appleWrite(sub: sub, token: "t-link-\(round)"), makesSession: false), now: 1_000)
        #expect(linked.user.signInMethods == ["apple", "password"])
        return (linked.user, sub)
    }

    /// Runs `body`, keeping what it returned or threw.
    static func outcome(_ body: () async throws -> UserRecord) async -> Result<UserRecord, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    /// docs/reference/http-api.md: the two removals of a user's two methods at the same moment (real concurrent
    /// transactions: the store has two connections) are serialized per user: one succeeds,
    /// the other is refused as the last method, and the user keeps the method not removed.
    /// Without the lock, PostgreSQL let both commit in most rounds.
    @Test(arguments: Engine.available)
    func concurrentRemovalsOfBothMethodsLeaveOne(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            for round in 0..<30 {
                let (user, _) = try await Self.userWithBothMethods(store, round: round)
                let eventsBefore = try await Self.events(store).count
                async let unlinking = Self.outcome { try await store.unbindAppleID(userID: user.id, now: 1_100, firstAttemptAt: 1_100) }
                async let removing = Self.outcome { try await store.removePassword(userID: user.id, now: 1_100) }
                let (unlinked, removed) = await (unlinking, removing)
                let after = try #require(try await store.users.user(id: user.id))
                switch (unlinked, removed) {
                case (.success(let kept), .failure(let refusal)):
                    #expect(refusal as? PasswordAccountConflict == .lastSignInMethod, "round \(round): \(refusal)")
                    #expect(kept == after)
                    #expect(after.signInMethods == ["password"], "round \(round)")
                case (.failure(let refusal), .success(let kept)):
                    #expect(refusal as? PasswordAccountConflict == .lastSignInMethod, "round \(round): \(refusal)")
                    #expect(kept == after)
                    #expect(after.signInMethods == ["apple"], "round \(round)")
                default:
                    Issue.record("round \(round): not exactly one removal succeeded (\(unlinked), \(removed)); the user is left with \(after.signInMethods)")
                }
                // One change, one event.
                #expect(try await Self.events(store).count == eventsBefore + 1, "round \(round)")
            }
        }
    }

    /// The upgrade (bind the Apple ID and remove the password) at the same moment as an
    /// unlink of that Apple ID: whichever order they take, the user keeps a way in (the unlink
    /// refused, or undone by the upgrade's binding).
    @Test(arguments: Engine.available)
    func anUpgradeRacingAnUnlinkLeavesAWayIn(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            for round in 0..<30 {
                let (user, sub) = try await Self.userWithBothMethods(store, round: round)
                async let upgrading = Self.outcome {
                    try await store.bindAppleID(
                        AppleBinding(
                            userID: user.id, write: Self.appleWrite(sub: sub, token: "t-upgrade-\(round)"), removingPassword: "$scrypt$h1",
                            makesSession: true),
                        now: 1_100
                    ).user
                }
                async let unlinking = Self.outcome { try await store.unbindAppleID(userID: user.id, now: 1_100, firstAttemptAt: 1_100) }
                let (upgraded, unlinked) = await (upgrading, unlinking)
                let after = try #require(try await store.users.user(id: user.id))
                #expect(after.signInMethods == ["apple"], "round \(round): \(upgraded), \(unlinked)")
                #expect(after.appleSub == sub)
                #expect((try? upgraded.get()) != nil, "round \(round): the upgrade is refused by nothing here (\(upgraded))")
                if case .failure(let refusal) = unlinked {
                    #expect(refusal as? PasswordAccountConflict == .lastSignInMethod, "round \(round): \(refusal)")
                }
            }
        }
    }

    /// A reset completed at the same moment as the removal of the password: whichever goes
    /// first, neither fails (the reset finds its code gone, or the removal follows it). Before
    /// the reset locked the user first, PostgreSQL could deadlock the two (the removal holding
    /// the user and waiting for the code's row, the reset the other way round).
    @Test(arguments: Engine.available)
    func aResetRacingAPasswordRemovalNeitherDeadlocksNorFails(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            for round in 0..<30 {
                let (user, _) = try await Self.userWithBothMethods(store, round: round)
                let code = "reset-\(round)"
                #expect(try await store.requestPasswordReset(
                    email: "both\(round)@example.com",
                    code: EmailCode(kind: .passwordReset, code: code, codeHash: SHA256.hash(code), expiresAt: 2_800), now: 1_000) == .issued)
                async let resetting = Self.outcome {
                    try await store.resetPassword(codeHash: SHA256.hash(code), newHash: "$scrypt$new", now: 1_100) ?? user
                }
                async let removing = Self.outcome { try await store.removePassword(userID: user.id, now: 1_100) }
                let (reset, removed) = await (resetting, removing)
                #expect((try? reset.get()) != nil, "round \(round): \(reset)")
                #expect((try? removed.get()) != nil, "round \(round): \(removed)")
                let after = try #require(try await store.users.user(id: user.id))
                #expect(after.signInMethods == ["apple"], "round \(round)")
            }
        }
    }

    // MARK: - No silent merges

    @Test(arguments: Engine.available)
    func anAppleSignInWithAPasswordAccountsVerifiedEmailIsRefusedAndCreatesNothing(_ engine: Engine) async throws {
        try await Self.withStore(engine) { store in
            let ada = try await Self.signUp(store, "ada@example.com")
            try await Self.prove(store, "ada@example.com")
            let identity = VerifiedIdentity(appleSub: "s1", email: "ADA@example.com", emailVerified: true, isPrivateEmail: false)
            #expect(try await store.refusesAsExistingAccount(identity))
            await #expect(throws: SignInConflict.accountExists) {
                try await store.completeSignIn(Self.appleWrite(sub: "s1", token: "t1", email: "ADA@example.com"), now: 1_100)
            }
            #expect(try await Self.count(store, "users") == 1)
            #expect(try await store.replay.isUsed(SHA256.hash("t1")) == false)
            #expect(try await store.users.user(id: ada.user.id) == ada.user)

            // A relay or unverified email is not refused: it proves no ownership of Ada's.
            #expect(try await store.refusesAsExistingAccount(VerifiedIdentity(appleSub: "s2", email: "ada@example.com", emailVerified: false)) == false)
            #expect(try await store.refusesAsExistingAccount(
                VerifiedIdentity(appleSub: "s2", email: "ada@example.com", emailVerified: true, isPrivateEmail: true)) == false)
            // Once the Apple ID is linked, it signs in as Ada whatever its email says.
            _ = try await store.bindAppleID(AppleBinding(userID: ada.user.id, write: Self.appleWrite(sub: "s1", token: "t2"), makesSession: false), now: 1_200)
            #expect(try await store.refusesAsExistingAccount(identity) == false)
            let signedIn = try await store.completeSignIn(Self.appleWrite(sub: "s1", token: "t3", email: "ada@example.com"), now: 1_300)
            #expect(signedIn.user.id == ada.user.id)
        }
    }

    // MARK: - The migration

    @Test(arguments: Engine.available)
    func version8KeepsEveryRowIndexAndReferenceOfAPopulatedVersion6Database(_ engine: Engine) async throws {
        try await withLocation(engine) { location in
            // A database at version 6 with a user, a session, Apple tokens and an app return code.
            switch engine {
            case .sqlite:
                let database = try Database(path: location, readers: 1)
                try Migrator(Schema.migrations.filter { $0.version <= 6 }).migrate(database)
                try database.writeAndWait { try Self.populateVersion6($0) }
                database.close()
            case .postgres:
                let connection = try PostgresConnection(location)
                try PostgresSchema.migrate(connection, through: 6)
                try connection.transaction { try Self.populateVersion6(PostgresSession($0)) }
                connection.close()
            }
            let store = try Store.open(location, connections: 2) { testDataKey }
            defer { store.close() }
            let user = try #require(try await store.users.user(id: "usr_1"))
            #expect(user.appleSub == "sub-1" && user.externalID == "crm-1" && user.email == "ada@example.com")
            #expect(user.signInMethods == ["apple"])
            #expect(try await store.sessions.list(userID: "usr_1", now: 1_000).map(\.id) == ["ses_1"])
            #expect(try await Self.count(store, "apple_tokens") == 1)
            #expect(try await Self.count(store, "app_return_codes") == 1)

            // apple_sub takes NULL now; its uniqueness and external_id's still hold.
            let made = try await Self.signUp(store, "bob@example.com")
            #expect(made.user.appleSub == nil)
            _ = try await Self.signUp(store, "cy@example.com")
            await #expect(throws: ExternalIDTaken()) { try await store.setExternalID(userID: made.user.id, externalID: "crm-1", now: 1_000) }
            await #expect(throws: (any Error).self) {
                try await store.engine.write { try $0.run("UPDATE users SET apple_sub = 'sub-1' WHERE id = ?", [.text(made.user.id)]) }
            }
            // The references still cascade: deleting the user takes its rows with it.
            _ = try await store.deleteUser(userID: "usr_1", now: 1_000, firstAttemptAt: 1_000)
            #expect(try await Self.count(store, "sessions") == 2)
            #expect(try await Self.count(store, "apple_tokens") == 0)
            #expect(try await Self.count(store, "app_return_codes") == 0)

            if engine == .sqlite {
                let indexes = try await store.engine.read { connection in
                    try connection.query("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'").map { try $0.string(0) }
                }
                for index in ["sessions_by_user", "apple_tokens_validation_due", "users_external_id", "users_verified_email"] {
                    #expect(indexes.contains(index), "\(index)")
                }
                let check = try await store.engine.read { try $0.queryOne("PRAGMA integrity_check")?.string(0) }
                #expect(check == "ok")
                let violations = try await store.engine.read { try $0.query("PRAGMA foreign_key_check") }
                #expect(violations.isEmpty)
            }
        }
    }

    /// Migration 12: passwords made before verification existed are unproven, except one an
    /// Apple user set on the email Apple proved (else a reset would unbind the owner's own
    /// Apple ID). A password whose account's email is another (an Apple ID linked over it, as a
    /// squatter would) or a relay address stays unproven.
    @Test(arguments: Engine.available)
    func version12ProvesOnlyPasswordsSetOnTheEmailAppleProved(_ engine: Engine) async throws {
        try await withLocation(engine) { location in
            let populate: (any SQLConnection) throws -> Void = { connection in
                let users: [(String, String?, String, Int64, Int64)] = [
                    ("usr_apple", "sub-a", "Ada@Example.com", 1, 0),   // Apple first, then a password on its email
                    ("usr_linked", "sub-l", "mallory@icloud.com", 1, 0), // password first, another Apple ID linked over it
                    ("usr_relay", "sub-r", "x1@privaterelay.appleid.com", 1, 1),
                    ("usr_plain", nil, "bob@example.com", 0, 0),
                ]
                for (id, sub, email, verified, relay) in users {
                    try connection.run(
                        "INSERT INTO users(id, apple_sub, email, email_verified, is_private_email, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 100, 100)",
                        [.text(id), sub.map { .text($0) } ?? .null, .text(email), .integer(verified), .integer(relay)])
                }
                for (id, email) in [("usr_apple", "ada@example.com"), ("usr_linked", "victim@example.com"),
                                    ("usr_relay", "x1@privaterelay.appleid.com"), ("usr_plain", "bob@example.com")] {
                    try connection.run(
                        "INSERT INTO password_credentials(user_id, email, hash, created_at, updated_at) VALUES (?, ?, '$scrypt$h', 100, 100)",
                        [.text(id), .text(email)])
                }
            }
            switch engine {
            case .sqlite:
                let database = try Database(path: location, readers: 1)
                try Migrator(Schema.migrations.filter { $0.version <= 11 }).migrate(database)
                try database.writeAndWait { try populate($0) }
                database.close()
            case .postgres:
                let connection = try PostgresConnection(location)
                try PostgresSchema.migrate(connection, through: 11)
                try connection.transaction { try populate(PostgresSession($0)) }
                connection.close()
            }
            let store = try Store.open(location, connections: 2) { testDataKey }
            defer { store.close() }
            let proven = try await store.engine.read { connection in
                try connection.query("SELECT user_id FROM password_credentials WHERE email_verified = 1 ORDER BY user_id").map { try $0.string(0) }
            }
            #expect(proven == ["usr_apple"])
        }
    }

    static func populateVersion6(_ connection: any SQLConnection) throws {
        try connection.run(
            """
            INSERT INTO users(id, apple_sub, email, email_verified, is_private_email, created_at, updated_at, external_id)
            VALUES ('usr_1', 'sub-1', 'ada@example.com', 1, 0, 100, 100, 'crm-1')
            """, [])
        try connection.run(
            "INSERT INTO sessions(id, user_id, token_hash, created_at, last_seen_at, expires_at) VALUES ('ses_1', 'usr_1', ?, 100, 900, 99999)",
            [.blob(SHA256.hash("token"))])
        try connection.run(
            "INSERT INTO apple_tokens(user_id, client_id, updated_at, validation_due_at) VALUES ('usr_1', 'com.example.app', 100, 200)", [])
        try connection.run(
            "INSERT INTO app_return_codes(code_hash, user_id, code_challenge, created, expires_at) VALUES (?, 'usr_1', 'challenge', 1, 99999)",
            [.blob(SHA256.hash("code"))])
    }
}
