import OpenSSLCrypto
import Passwords
import Store
import WireFormat

/// Why a password operation was refused (docs/guides/passwords-and-email.md); `ErrorResponses` has the status and words.
package enum PasswordFailure: Error, Equatable {
    case invalidRequest(String)
    case weakPassword(String)
    case accountExists
    /// A wrong email or password: alike for both, in body and time.
    case invalidCredentials
    case tooManyAttempts(retryAfter: Int64)
    /// Every hashing thread is busy and the queue is full.
    case busy
    /// The session is older than `PasswordAccounts.recentSignIn`.
    case reauthenticationRequired
    /// Resets need `webhook_url`: the code travels in a webhook.
    case notConfigured
    /// A reset code wrong, used or expired.
    case invalidGrant
    case lastSignInMethod
    /// docs/guides/passwords-and-email.md: the account's email is unproven.
    case emailUnverified
}

/// Email and password accounts (docs/guides/passwords-and-email.md): sign-up, sign-in, changing and resetting a password,
/// removing it. Each hash runs on `hasher`'s own threads; each change is one Store call.
package struct PasswordAccounts: Sendable {
    package let store: Store
    package let hasher: PasswordHasher
    package let sessionTTL: Int64
    /// Whether a `webhook_url` is set, so reset codes can be delivered.
    package let canDeliverResetCodes: Bool
    /// Counts the codes an address's hourly limit kept from being sent.
    package let emailSuppressed: LabeledCounter
    /// Where a reset request's work runs, after its answer.
    package let requests: EmailRequestQueue
    package let clock: @Sendable () -> Int64

    /// A session this young counts as a recent sign-in (setting a first password, linking).
    package static let recentSignIn: Int64 = 10 * 60
    /// A reset code's life.
    package static let resetCodeLifetime: Int64 = 30 * 60
    /// Reset and verification codes: 128 random bits, base64url.
    package static let resetCodeBytes = 16
    /// A verification code's life.
    package static let verificationCodeLifetime: Int64 = 24 * 60 * 60

    /// Longest email kept (RFC 5321's path limit).
    package static let maxEmailBytes = 254

    package struct SignedIn: Sendable {
        package let user: UserRecord
        package let session: NewSession
        package let created: Bool
    }

    // MARK: - Sign-up and sign-in

    package func signUp(
        email: String, password: String, givenName: String?, familyName: String?, deviceName: String?, locale: String = "en",
        audit: AuditContext = AuditContext(actor: .user)
    ) async throws -> SignedIn {
        let email = try Self.checkedEmail(email)
        if let weakness = PasswordPolicy.weakness(of: password, email: email) { throw PasswordFailure.weakPassword(weakness) }
        // Known before a hash is spent; the write checks again.
        if try await store.passwordCredential(email: email) != nil { throw PasswordFailure.accountExists }
        let hash = try await hashed(password)
        var signUp = PasswordSignUp(email: email, hash: hash, sessionTTL: sessionTTL, verification: newCode(.verifyEmail))
        signUp.givenName = givenName
        signUp.familyName = familyName
        signUp.deviceName = deviceName
        signUp.locale = locale
        signUp.audit = audit
        do {
            let made = try await store.createPasswordUser(signUp, now: clock())
            count(made.verification ?? .issued)
            return SignedIn(user: made.user, session: made.session, created: true)
        } catch PasswordAccountConflict.accountExists {
            throw PasswordFailure.accountExists
        }
    }

    package func signIn(
        email: String, password: String, deviceName: String?, client: String, audit: AuditContext = AuditContext(actor: .user)
    ) async throws -> SignedIn {
        let (credential, keys) = try await checkPassword(email: email, password: password, client: client, audit: audit)
        let rehash: String?
        if credential.needsRehash {
            // Today's parameters, at no cost to the sign-in if the pool is full.
            rehash = try? await hasher.hash(password)
        } else {
            rehash = nil
        }
        do {
            let made = try await store.completePasswordSignIn(
                userID: credential.credential.userID, checkedHash: credential.credential.hash, rehash: rehash, attempts: keys,
                deviceName: deviceName, sessionTTL: sessionTTL, now: clock(), audit: audit)
            return SignedIn(user: made.user, session: made.session, created: false)
        } catch PasswordAccountConflict.passwordChanged {
            throw PasswordFailure.invalidCredentials
        } catch PasswordAccountConflict.userGone {
            throw PasswordFailure.invalidCredentials
        }
    }

    package struct CheckedPassword: Sendable {
        package let credential: PasswordCredential
        package let needsRehash: Bool

        package init(credential: PasswordCredential, needsRehash: Bool) {
            self.credential = credential
            self.needsRehash = needsRehash
        }
    }

    /// The attempt limits, then one hash whether or not the email has a password, so a wrong
    /// email and a wrong password cost the same and read the same (401 `invalid_credentials`).
    /// The attempt stays counted unless the caller succeeds (`completePasswordSignIn` or
    /// `releasePasswordAttempt` takes it back).
    /// A failure for an email that has a password is `sign_in.failed` on its user's timeline.
    package func checkPassword(
        email: String, password: String, client: String, audit: AuditContext = AuditContext(actor: .user)
    ) async throws -> (CheckedPassword, PasswordAttempts.Keys) {
        let keys = PasswordAttempts.Keys(email: email, address: client)
        if case .refused(let retryAfter) = try await store.reservePasswordAttempt(keys, now: clock()) {
            // Only the refusal costs this read: an unknown email records nothing.
            if let owner = try await store.passwordCredential(email: email) {
                try await store.recordSignInFailure(userID: owner.userID, method: .password, reason: "too_many_attempts", now: clock(), audit: audit)
            }
            throw PasswordFailure.tooManyAttempts(retryAfter: retryAfter)
        }
        let credential = try await store.passwordCredential(email: email)
        let verification: PasswordHasher.Verification
        do {
            verification = try await hasher.verify(password, against: credential?.hash)
        } catch {
            // Refused unchecked: not a failure to count.
            try? await store.uncountPasswordAttempt(keys)
            throw PasswordFailure.busy
        }
        guard verification.matches, let credential else {
            try await store.recordPasswordFailure(keys, userID: credential?.userID, now: clock(), audit: audit)
            throw PasswordFailure.invalidCredentials
        }
        return (CheckedPassword(credential: credential, needsRehash: verification.needsRehash), keys)
    }

    // MARK: - Changing and removing

    /// `PUT /api/account/password`: replaces the password (`current` must match it), or sets a
    /// first one on the account's email, which needs a recent sign-in. Every other session ends.
    package func setPassword(
        for found: LiveSession, current: String?, new: String, client: String, audit: AuditContext = AuditContext(actor: .user)
    ) async throws {
        let existing = try await store.passwordCredential(userID: found.user.id)
        let email: String
        if let existing {
            email = existing.email
        } else {
            guard found.session.createdAt > clock() - Self.recentSignIn else { throw PasswordFailure.reauthenticationRequired }
            guard let userEmail = found.user.email, !userEmail.isEmpty else {
                throw PasswordFailure.invalidRequest("the account has no email address to sign in with")
            }
            guard found.user.emailVerified else { throw PasswordFailure.emailUnverified }
            email = userEmail
        }
        // Before the current password is checked: a weak new one costs no attempt.
        if let weakness = PasswordPolicy.weakness(of: new, email: email) { throw PasswordFailure.weakPassword(weakness) }
        var checked: (hash: String, keys: PasswordAttempts.Keys)?
        if let existing {
            guard let current else { throw PasswordFailure.invalidCredentials }
            let (credential, keys) = try await checkPassword(email: existing.email, password: current, client: client, audit: audit)
            guard credential.credential.userID == found.user.id else { throw PasswordFailure.invalidCredentials }
            checked = (credential.credential.hash, keys)
        }
        let hash = try await hashed(new)
        do {
            _ = try await store.setPassword(
                userID: found.user.id, checkedHash: checked?.hash, newHash: hash, keptSessionID: found.session.id, attempts: checked?.keys,
                now: clock(), audit: audit)
        } catch let conflict as PasswordAccountConflict {
            switch conflict {
            case .accountExists: throw PasswordFailure.accountExists
            case .noEmail: throw PasswordFailure.invalidRequest("the account has no email address to sign in with")
            case .emailUnverified: throw PasswordFailure.emailUnverified
            default: throw PasswordFailure.invalidCredentials
            }
        }
    }

    /// `sessionID`: the session asking, whose device the security notice names.
    package func removePassword(userID: String, sessionID: String? = nil, audit: AuditContext = AuditContext(actor: .user)) async throws -> UserRecord {
        do {
            return try await store.removePassword(userID: userID, sessionID: sessionID, now: clock(), audit: audit)
        } catch PasswordAccountConflict.lastSignInMethod {
            throw PasswordFailure.lastSignInMethod
        }
    }

    // MARK: - Reset

    /// A code for the password of `email`, delivered by the `user.password_reset_requested`
    /// webhook. Answers alike, in body and in time, whether or not the email has a password:
    /// only what needs no database is checked here (the setting, the address's form); the
    /// lookup, the code, its message and the address's hourly limit are work for `requests`,
    /// run after the answer. The code's life and the limit's hour count from the request.
    package func requestReset(email: String) throws {
        guard canDeliverResetCodes else { throw PasswordFailure.notConfigured }
        let email = try Self.checkedEmail(email)
        let now = clock()
        requests.submit("password_reset") { [self] in
            count(try await store.requestPasswordReset(email: email, code: newCode(.passwordReset, now: now), now: now))
        }
    }

    /// Sets the password a live code is for; every session of the user ends. A weak password is
    /// refused before the code is used up, so the person can try another.
    package func reset(code: String, newPassword: String, audit: AuditContext = AuditContext(actor: .user)) async throws {
        let codeHash = Self.resetCodeHash(code)
        guard let target = try await store.passwordResetTarget(codeHash: codeHash, now: clock()) else { throw PasswordFailure.invalidGrant }
        if let weakness = PasswordPolicy.weakness(of: newPassword, email: target.email) { throw PasswordFailure.weakPassword(weakness) }
        let hash = try await hashed(newPassword)
        guard try await store.resetPassword(codeHash: codeHash, newHash: hash, now: clock(), audit: audit) != nil else {
            throw PasswordFailure.invalidGrant
        }
    }

    package static func resetCodeHash(_ code: String) -> [UInt8] {
        SHA256.hash(Array(code.utf8))
    }

    // MARK: - Verification

    /// `POST /api/account/email/verify-request`: a new code for the user's unproven password
    /// email (nothing when it is proven). Codes travel in a webhook, as reset codes do.
    package func requestVerification(userID: String) async throws {
        guard canDeliverResetCodes else { throw PasswordFailure.notConfigured }
        count(try await store.requestEmailVerification(userID: userID, code: newCode(.verifyEmail), now: clock()))
    }

    /// `POST /api/auth/email/verify`: the code proves the email it was sent to.
    package func verifyEmail(code: String, audit: AuditContext = AuditContext(actor: .user)) async throws -> UserRecord {
        guard let user = try await store.verifyEmail(codeHash: Self.resetCodeHash(code), now: clock(), audit: audit) else {
            throw PasswordFailure.invalidGrant
        }
        return user
    }

    /// A fresh code of `kind`: 128 random bits, base64url, for its kind's life from `now`
    /// (the clock's now unless given).
    private func newCode(_ kind: EmailCode.Kind, now: Int64? = nil) -> EmailCode {
        let code = Base64.url.encode(SecureRandom.bytes(Self.resetCodeBytes))
        let lifetime = kind == .verifyEmail ? Self.verificationCodeLifetime : Self.resetCodeLifetime
        return EmailCode(kind: kind, code: code, codeHash: Self.resetCodeHash(code), expiresAt: (now ?? clock()) + lifetime)
    }

    private func count(_ outcome: EmailCode.Outcome) {
        if outcome == .rateLimited { emailSuppressed.increment("rate") }
    }

    // MARK: - Helpers

    package func hashed(_ password: String) async throws -> String {
        do {
            return try await hasher.hash(password)
        } catch {
            throw PasswordFailure.busy
        }
    }

    /// Trimmed, with an `@` between a local part and a domain, no control characters, at most
    /// 254 bytes.
    package static func checkedEmail(_ email: String) throws -> String {
        let trimmed = EmailAddress.trimmed(email)
        guard let at = trimmed.lastIndex(of: "@"), at != trimmed.startIndex, trimmed.index(after: at) != trimmed.endIndex,
              trimmed.utf8.count <= maxEmailBytes,
              !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0.properties.isWhitespace })
        else { throw PasswordFailure.invalidRequest("email must be an email address") }
        return trimmed
    }

    package init(store: Store, hasher: PasswordHasher, sessionTTL: Int64, canDeliverResetCodes: Bool, emailSuppressed: LabeledCounter, requests: EmailRequestQueue, clock: @escaping @Sendable () -> Int64) {
        self.store = store
        self.hasher = hasher
        self.sessionTTL = sessionTTL
        self.canDeliverResetCodes = canDeliverResetCodes
        self.emailSuppressed = emailSuppressed
        self.requests = requests
        self.clock = clock
    }
}
