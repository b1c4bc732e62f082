import SQLRow

/// A user's password (docs/guides/passwords-and-email.md): the email it signs in with (normalized) and its PHC hash.
public struct PasswordCredential: Sendable, Equatable {
    public let userID: String
    public let email: String
    public let hash: String
    /// Whether a code sent to `email`, or Apple, proved it (docs/guides/passwords-and-email.md).
    public let emailVerified: Bool
    public let createdAt: Int64
    public let updatedAt: Int64

    init(row: SQLRow) throws {
        userID = try row.string("user_id")
        email = try row.string("email")
        hash = try row.string("hash")
        emailVerified = try row.bool("email_verified")
        createdAt = try row.int64("created_at")
        updatedAt = try row.int64("updated_at")
    }

    static let columns = "user_id, email, hash, email_verified, created_at, updated_at"
    static let byEmailSQL = "SELECT \(columns) FROM password_credentials WHERE email = ?"
    static let byUserSQL = "SELECT \(columns) FROM password_credentials WHERE user_id = ?"
}

/// Why a change to a password account was refused; the transaction kept nothing of it.
public enum PasswordAccountConflict: Error, Equatable, Sendable {
    /// The email belongs to a user already (a password's, or an Apple user's verified one).
    case accountExists
    /// The password that was checked is no longer the user's (changed or removed meanwhile).
    case passwordChanged
    /// The account has no email to sign in with.
    case noEmail
    /// Removing it would leave the user no way to sign in.
    case lastSignInMethod
    /// The Apple ID belongs to another user.
    case appleIDInUse
    /// The user has another Apple ID already.
    case otherAppleID
    /// The user (or the session that started the change) is gone.
    case userGone
    /// docs/guides/passwords-and-email.md: the account's email is unproven (linking an Apple ID, a first password).
    case emailUnverified
}

/// A new password account (`POST /api/auth/password/sign-up`).
public struct PasswordSignUp: Sendable {
    public var email: String
    public var hash: String
    public var givenName: String?
    public var familyName: String?
    public var deviceName: String?
    public var sessionTTL: Int64
    /// The `verify_email` code sent to the new account's email (docs/guides/passwords-and-email.md).
    public var verification: EmailCode
    /// The new user's language (`en` or `ko`), from the request's `Accept-Language`.
    public var locale = "en"
    /// Who signs up and from where, for the audit events of the sign-up's transaction.
    public var audit = AuditContext(actor: .user)

    public init(email: String, hash: String, sessionTTL: Int64, verification: EmailCode) {
        self.email = email
        self.hash = hash
        self.sessionTTL = sessionTTL
        self.verification = verification
    }
}

extension Store {
    // MARK: - Reading

    public func passwordCredential(email: String) async throws -> PasswordCredential? {
        let normalized = EmailAddress.normalized(email)
        return try await engine.read { try Self.credential(email: normalized, in: $0) }
    }

    public func passwordCredential(userID: String) async throws -> PasswordCredential? {
        try await engine.read { try Self.credential(userID: userID, in: $0) }
    }

    static func credential(email normalized: String, in connection: any SQLConnection) throws -> PasswordCredential? {
        try connection.queryOne(PasswordCredential.byEmailSQL, [.text(normalized)])
            .map(PasswordCredential.init)
    }

    static func credential(userID: String, in connection: any SQLConnection) throws -> PasswordCredential? {
        try connection.queryOne(PasswordCredential.byUserSQL, [.text(userID)])
            .map(PasswordCredential.init)
    }

    /// Whether `normalized` is taken by a user other than `exceptUserID`: as a password's email,
    /// or as the verified, non-relay email of an Apple user (the `users_verified_email` index).
    static func emailTaken(_ normalized: String, exceptUserID: String? = nil, in connection: any SQLConnection) throws -> Bool {
        if let holder = try credential(email: normalized, in: connection), holder.userID != exceptUserID { return true }
        let rows = try connection.query(
            """
            SELECT id FROM users
            WHERE \(EmailAddress.folded("email", connection.dialect)) = ? AND email_verified = 1 AND is_private_email = 0
            """,
            [.text(normalized)])
        return try rows.contains { try $0.string("id") != exceptUserID }
    }

    /// docs/guides/passwords-and-email.md "No silent merges": a Sign in with Apple of a `sub` not yet known whose token
    /// carries a verified, non-relay email that is another user's password email, proven
    /// (docs/guides/passwords-and-email.md: an unproven one blocks nobody). nil when the sign-in may go ahead.
    static func mergeRefusal(_ identity: VerifiedIdentity, in connection: any SQLConnection) throws -> SignInConflict? {
        guard mayRefuseAsExistingAccount(identity) else { return nil }
        return try mergeRefusal(identity, knownUser: UserStore.user(appleSub: identity.appleSub, in: connection), in: connection)
    }

    /// Whether `identity` can be refused as `account_exists` at all: only a verified email that
    /// is not a private relay address can be a password account's.
    public static func mayRefuseAsExistingAccount(_ identity: VerifiedIdentity) -> Bool {
        identity.email != nil && identity.emailVerified && !identity.isPrivateEmail
    }

    /// `mergeRefusal`, given the user of `identity.appleSub` as the transaction read it.
    static func mergeRefusal(_ identity: VerifiedIdentity, knownUser: UserRecord?, in connection: any SQLConnection) throws -> SignInConflict? {
        guard let email = identity.email, identity.emailVerified, !identity.isPrivateEmail, knownUser == nil,
              try credential(email: EmailAddress.normalized(email), in: connection)?.emailVerified == true
        else { return nil }
        return .accountExists
    }

    /// The read before a code goes to Apple: would this sign-in be refused as `account_exists`?
    public func refusesAsExistingAccount(_ identity: VerifiedIdentity) async throws -> Bool {
        try await engine.read { try Self.mergeRefusal(identity, in: $0) != nil }
    }

    // MARK: - Attempts

    /// Counts a password attempt before its hash is checked (docs/guides/passwords-and-email.md limits).
    public func reservePasswordAttempt(_ keys: PasswordAttempts.Keys, now: Int64) async throws -> PasswordAttempts.Check {
        try await PasswordAttempts.reserve(keys, now: now, engine: engine)
    }

    /// The password was wrong: its client address counts one more failure.
    /// With `userID` (the email is a known user's password email) the failure is also
    /// `sign_in.failed` in the same transaction.
    public func recordPasswordFailure(
        _ keys: PasswordAttempts.Keys, userID: String? = nil, now: Int64, audit: AuditContext = AuditContext(actor: .user)
    ) async throws {
        try await engine.write { connection in
            try PasswordAttempts.recordFailure(keys, now: now, in: connection)
            if let userID {
                try AuditTrail.record(
                    .signInFailed, userID: userID, detail: AuditTrail.detail(["method": "password", "reason": "invalid_credentials"]),
                    context: audit, now: now, in: connection)
            }
        }
    }

    /// `sign_in.failed` for a known user when nothing else is written: an attempt refused by
    /// its limit (`too_many_attempts`), an Apple sign-in refused as `account_exists`.
    public func recordSignInFailure(userID: String, method: SignInMethod, reason: String, now: Int64, audit: AuditContext) async throws {
        try await engine.write { connection in
            try AuditTrail.record(
                .signInFailed, userID: userID, detail: AuditTrail.detail(["method": method.rawValue, "reason": reason]), context: audit, now: now,
                in: connection)
        }
    }

    /// The user whose password email an Apple identity's verified email is (the one an
    /// `account_exists` refusal protects), if any.
    public func passwordOwner(of identity: VerifiedIdentity) async throws -> String? {
        guard let email = identity.email else { return nil }
        return try await engine.read { try Self.credential(email: EmailAddress.normalized(email), in: $0)?.userID }
    }

    /// The password was right: the email's count is reset.
    public func releasePasswordAttempt(_ keys: PasswordAttempts.Keys) async throws {
        try await engine.write { try PasswordAttempts.release(keys, in: $0) }
    }

    /// The password could not be checked (the hashing pool was full): the attempt is not counted.
    public func uncountPasswordAttempt(_ keys: PasswordAttempts.Keys) async throws {
        try await engine.write { try PasswordAttempts.uncount(keys, in: $0) }
    }

    // MARK: - Sign-up and sign-in

    /// Creates a user with a password and no Apple ID, with its first session, `user.created`
    /// and the code that proves its email (`issue`). Throws `accountExists` when the email
    /// belongs to a user already.
    public func createPasswordUser(_ signUp: PasswordSignUp, now: Int64) async throws -> SignedIn {
        let outbox = self.outbox
        let email = EmailAddress.trimmed(signUp.email), normalized = EmailAddress.normalized(signUp.email)
        return try await Self.mappingDuplicateEmail {
            try await engine.write { connection in
                if try Self.emailTaken(normalized, in: connection) { throw PasswordAccountConflict.accountExists }
                let id = RecordID.make(prefix: "usr_", orderedBy: now)
                try connection.run(
                    """
                    INSERT INTO users(id, apple_sub, email, email_verified, is_private_email, real_user_status,
                        given_name, family_name, locale, created_at, updated_at)
                    VALUES (?, NULL, ?, 0, 0, 'unsupported', ?, ?, ?, ?, ?)
                    """,
                    [.text(id), .text(email), Self.nonEmpty(signUp.givenName), Self.nonEmpty(signUp.familyName), .text(signUp.locale),
                     .integer(now), .integer(now)])
                try connection.run(
                    "INSERT INTO password_credentials(user_id, email, hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                    [.text(id), .text(normalized), .text(signUp.hash), .integer(now), .integer(now)])
                let user = try Self.existingUser(id, in: connection)
                try outbox.append(.userCreated, .user(user), now: now, in: connection)
                try AuditTrail.record(.userCreated, userID: id, detail: AuditTrail.detail(["method": "password"]), context: signUp.audit, now: now, in: connection)
                let sent = try Self.issue(signUp.verification, userID: id, email: normalized, now: now, outbox: outbox, in: connection)
                let session = try SessionStore.create(
                    in: connection, userID: id, deviceName: signUp.deviceName, now: now, ttl: signUp.sessionTTL,
                    origin: SessionOrigin(method: .password, signUp.audit), outbox: outbox)
                try AuditTrail.recordSignIn(id, session: session.record.id, method: .password, created: true, context: signUp.audit, now: now, in: connection)
                return SignedIn(user: user, session: session, created: true, verification: sent)
            }
        }
    }

    /// The password checked against `checkedHash` was right: makes the session, resets the
    /// email's failures, and stores `rehash` (today's parameters) when given, in one
    /// transaction. Throws `passwordChanged` when the credential no longer holds `checkedHash`.
    public func completePasswordSignIn(
        userID: String, checkedHash: String, rehash: String?, attempts: PasswordAttempts.Keys, deviceName: String?, sessionTTL: Int64,
        now: Int64, audit: AuditContext = AuditContext(actor: .user)
    ) async throws -> SignedIn {
        let outbox = self.outbox
        return try await engine.write { connection in
            guard try Self.credential(userID: userID, in: connection)?.hash == checkedHash else { throw PasswordAccountConflict.passwordChanged }
            if let rehash {
                try connection.run(
                    "UPDATE password_credentials SET hash = ?, updated_at = ? WHERE user_id = ?", [.text(rehash), .integer(now), .text(userID)])
            }
            try PasswordAttempts.release(attempts, in: connection)
            let user = try Self.existingUser(userID, in: connection)
            let session = try SessionStore.create(
                in: connection, userID: userID, deviceName: deviceName, now: now, ttl: sessionTTL, origin: SessionOrigin(method: .password, audit),
                outbox: outbox)
            try AuditTrail.recordSignIn(userID, session: session.record.id, method: .password, created: false, context: audit, now: now, in: connection)
            return SignedIn(user: user, session: session, created: false)
        }
    }

    // MARK: - Changing, resetting, removing

    /// `PUT /api/account/password`: replaces the password (its current hash must still be
    /// `checkedHash`), or with `checkedHash` nil sets a first one on the user's email. Every
    /// session but `keptSessionID` ends, reset codes are void, and a first password is
    /// `user.updated` (`sign_in_methods`).
    public func setPassword(
        userID: String, checkedHash: String?, newHash: String, keptSessionID: String, attempts: PasswordAttempts.Keys?, now: Int64,
        audit: AuditContext = AuditContext(actor: .user)
    ) async throws -> UserRecord {
        let outbox = self.outbox
        return try await Self.mappingDuplicateEmail {
            try await engine.write { connection in
                let before = try Self.lockedUser(userID, in: connection)
                if let current = try Self.credential(userID: userID, in: connection) {
                    guard current.hash == checkedHash else { throw PasswordAccountConflict.passwordChanged }
                    try connection.run(
                        "UPDATE password_credentials SET hash = ?, updated_at = ? WHERE user_id = ?", [.text(newHash), .integer(now), .text(userID)])
                    try connection.run("DELETE FROM password_reset_codes WHERE user_id = ?", [.text(userID)])
                } else {
                    guard checkedHash == nil else { throw PasswordAccountConflict.passwordChanged }
                    guard let email = before.email, !email.isEmpty else { throw PasswordAccountConflict.noEmail }
                    // docs/guides/passwords-and-email.md: only an email Apple proved becomes a password's.
                    guard before.emailVerified else { throw PasswordAccountConflict.emailUnverified }
                    let normalized = EmailAddress.normalized(email)
                    if try Self.emailTaken(normalized, exceptUserID: userID, in: connection) { throw PasswordAccountConflict.accountExists }
                    try connection.run(
                        "INSERT INTO password_credentials(user_id, email, hash, email_verified, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)",
                        [.text(userID), .text(normalized), .text(newHash), .integer(now), .integer(now)])
                    try Self.touch(userID, now: now, in: connection)
                }
                let ended = try connection.query(
                    "DELETE FROM sessions WHERE user_id = ? AND id <> ? RETURNING id", [.text(userID), .text(keptSessionID)]
                ).map { try $0.string(0) }
                if let attempts { try PasswordAttempts.release(attempts, in: connection) }
                let after = try Self.existingUser(userID, in: connection)
                try outbox.appendIfChanged(from: before, to: after, now: now, in: connection)
                try AuditTrail.record(before.hasPassword ? .passwordChanged : .passwordSet, userID: userID, context: audit, now: now, in: connection)
                try AuditTrail.recordEnded(ended, userID: userID, reason: .passwordChanged, context: audit, now: now, outbox: outbox, in: connection)
                try Self.noticeSecurityChange(
                    before.hasPassword ? "password_changed" : "password_set", user: after,
                    device: try Self.deviceName(sessionID: keptSessionID, in: connection), now: now, outbox: outbox, in: connection)
                return after
            }
        }
    }

    /// `POST /api/auth/password/reset-request`: for the password of `email`, a reset code
    /// (`issue`: its hash stored, the code sent in `user.password_reset_requested`), in one
    /// transaction. `notNeeded` when no password has that email (nothing is stored).
    public func requestPasswordReset(email: String, code: EmailCode, now: Int64) async throws -> EmailCode.Outcome {
        let outbox = self.outbox
        let normalized = EmailAddress.normalized(email)
        return try await engine.write { connection in
            guard let credential = try Self.credential(email: normalized, in: connection) else { return .notNeeded }
            return try Self.issue(code, userID: credential.userID, email: credential.email, now: now, outbox: outbox, in: connection)
        }
    }

    /// Live reset codes per user: enough for a person who asks again, few enough that a flood
    /// of requests stores nothing more.
    public static let maxResetCodes = EmailCode.livePerUser

    /// The credential a live reset code would reset (the code is not used up), for checking
    /// the new password against its email first.
    public func passwordResetTarget(codeHash: [UInt8], now: Int64) async throws -> PasswordCredential? {
        try await engine.read { connection in
            guard let row = try connection.queryOne(
                "SELECT user_id FROM password_reset_codes WHERE code_hash = ? AND expires_at > ?", [.blob(codeHash), .integer(now)])
            else { return nil }
            return try Self.credential(userID: try row.string("user_id"), in: connection)
        }
    }

    /// `POST /api/auth/password/reset`: uses the code up whatever follows; when it was live,
    /// sets the new password, voids the user's other codes, ends every session and forgets the
    /// email's failed attempts. The code reached the inbox, so the email is proven
    /// (`proveCredential`); when it was unproven until now, the Apple ID bound meanwhile is
    /// unbound and its tokens queued for revocation (docs/guides/passwords-and-email.md). nil for a code unknown, used or
    /// expired.
    public func resetPassword(
        codeHash: [UInt8], newHash: String, now: Int64, audit: AuditContext = AuditContext(actor: .user)
    ) async throws -> UserRecord? {
        let (vault, queue, outbox) = (self.vault, revocations, self.outbox)
        return try await engine.write { connection -> UserRecord? in
            // The user is locked before the code is used up, in the order every change of
            // sign-in methods takes its locks (docs/guides/passwords-and-email.md): a reset beside a password removal
            // would otherwise deadlock on PostgreSQL.
            guard let owner = try connection.queryOne("SELECT user_id FROM password_reset_codes WHERE code_hash = ?", [.blob(codeHash)])
            else { return nil }
            _ = try Self.lockedUser(try owner.string("user_id"), in: connection)
            guard let row = try connection.queryOne(
                "DELETE FROM password_reset_codes WHERE code_hash = ? RETURNING user_id, expires_at", [.blob(codeHash)]),
                try row.int64("expires_at") > now,
                let credential = try Self.credential(userID: try row.string("user_id"), in: connection)
            else { return nil }
            let userID = credential.userID
            let before = try Self.existingUser(userID, in: connection)
            try connection.run("UPDATE password_credentials SET hash = ?, updated_at = ? WHERE user_id = ?", [.text(newHash), .integer(now), .text(userID)])
            try connection.run("DELETE FROM password_reset_codes WHERE user_id = ?", [.text(userID)])
            if !credential.emailVerified, before.appleSub != nil {
                try Self.unbindUnprovenAppleID(credential, now: now, vault: vault, queue: queue, in: connection)
                try AuditTrail.record(.appleIDUnlinked, userID: userID, context: audit, now: now, in: connection)
            }
            try Self.proveCredential(credential, now: now, outbox: outbox, in: connection)
            if !credential.emailVerified {
                try AuditTrail.record(.emailVerified, userID: userID, context: audit, now: now, in: connection)
            }
            let ended = try connection.query("DELETE FROM sessions WHERE user_id = ? RETURNING id", [.text(userID)]).map { try $0.string(0) }
            try PasswordAttempts.forget(email: credential.email, in: connection)
            let after = try Self.existingUser(userID, in: connection)
            try outbox.appendIfChanged(from: before, to: after, now: now, in: connection)
            try AuditTrail.record(.passwordReset, userID: userID, context: audit, now: now, in: connection)
            try AuditTrail.recordEnded(ended, userID: userID, reason: .passwordReset, context: audit, now: now, outbox: outbox, in: connection)
            try Self.noticeSecurityChange("password_reset", user: after, device: nil, now: now, outbox: outbox, in: connection)
            return after
        }
    }

    /// `DELETE /api/account/password`: only while the user has an Apple ID to sign in with
    /// (else `lastSignInMethod`). A user without a password is returned unchanged. `sessionID`
    /// names the device in the security notice.
    public func removePassword(
        userID: String, sessionID: String? = nil, now: Int64, audit: AuditContext = AuditContext(actor: .user)
    ) async throws -> UserRecord {
        let outbox = self.outbox
        return try await engine.write { connection in
            let before = try Self.lockedUser(userID, in: connection)
            guard before.hasPassword else { return before }
            guard before.appleSub != nil else { throw PasswordAccountConflict.lastSignInMethod }
            try connection.run("DELETE FROM password_credentials WHERE user_id = ?", [.text(userID)])
            try Self.touch(userID, now: now, in: connection)
            let after = try Self.existingUser(userID, in: connection)
            try outbox.appendIfChanged(from: before, to: after, now: now, in: connection)
            try AuditTrail.record(.passwordRemoved, userID: userID, context: audit, now: now, in: connection)
            try Self.noticeSecurityChange(
                "password_removed", user: after, device: try Self.deviceName(sessionID: sessionID, in: connection), now: now, outbox: outbox,
                in: connection)
            return after
        }
    }

    static func prunePasswordRecords(in connection: any SQLConnection, now: Int64) throws -> Int {
        try connection.run("DELETE FROM password_reset_codes WHERE expires_at <= ?", [.integer(now)])
            + PasswordAttempts.prune(in: connection, now: now)
    }

    // MARK: - Helpers

    /// The user row, which the caller's transaction has just read or written.
    static func existingUser(_ id: String, in connection: any SQLConnection) throws -> UserRecord {
        guard let user = try UserStore.user(id: id, in: connection) else { throw PasswordAccountConflict.userGone }
        return user
    }

    /// The user row, locked until the caller's transaction ends: what every change that adds
    /// or removes a sign-in method reads first, so such changes of one user run one at a time,
    /// each seeing what the one before left (docs/guides/passwords-and-email.md: two removals at once never take the last
    /// way in). SQLite runs one write at a time already. On PostgreSQL the lock is the one an
    /// UPDATE of the row takes (so a session's insert, which only key-shares the row, is not held
    /// up), in a statement of its own: the read after it takes a new snapshot (READ COMMITTED),
    /// whereas a locking read that waited re-checks only the user row, not the password subquery.
    static func lockedUser(_ id: String, in connection: any SQLConnection) throws -> UserRecord {
        if connection.dialect == .postgres {
            guard try connection.queryOne("SELECT id FROM users WHERE id = ? FOR NO KEY UPDATE", [.text(id)]) != nil else {
                throw PasswordAccountConflict.userGone
            }
        }
        return try existingUser(id, in: connection)
    }

    /// Marks the user row changed: its sign-in methods changed, and the session caches of
    /// every instance hold user rows (SQLite's change tracker, PostgreSQL's NOTIFY trigger).
    static func touch(_ userID: String, now: Int64, in connection: any SQLConnection) throws {
        try connection.run("UPDATE users SET updated_at = ? WHERE id = ?", [.integer(now), .text(userID)])
    }

    static func nonEmpty(_ text: String?) -> SQLValue {
        guard let text, !text.isEmpty else { return .null }
        return .text(text)
    }

    /// Two instances racing to take one email: the unique index refuses the second.
    static func mappingDuplicateEmail<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch StoreError.uniqueViolation {
            throw PasswordAccountConflict.accountExists
        }
    }
}
