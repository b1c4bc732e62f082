import SQLRow
import WireFormat

/// Binding a verified Apple ID to an existing user (docs/guides/passwords-and-email.md): the upgrade from a password, or
/// linking from a signed-in session.
public struct AppleBinding: Sendable {
    public var userID: String
    /// What the identity token (and its code exchange) brought: the used-token mark, the nonce
    /// to use up, Apple's tokens, the name Apple sends once, and the session's device and TTL.
    public var write: SignInWrite
    /// The upgrade: the password hash that was just checked. The password is removed in the
    /// same transaction, and only if it still is this one.
    public var removingPassword: String?
    /// The upgrade makes a session; linking does not.
    public var makesSession: Bool
    /// Linking from the web flow: the session that started it, which must still be live.
    public var sessionID: String?

    public init(userID: String, write: SignInWrite, removingPassword: String? = nil, makesSession: Bool, sessionID: String? = nil) {
        self.userID = userID
        self.write = write
        self.removingPassword = removingPassword
        self.makesSession = makesSession
        self.sessionID = sessionID
    }
}

extension Store {
    /// Binds the Apple ID of `binding.write.identity` to the user in one transaction: the
    /// token and nonce marks, the Apple ID with what the token says (as a sign-in of an
    /// existing user would write), Apple's tokens, for the upgrade the password's removal, and
    /// the session, with `user.updated`. Nothing is kept on any refusal: `SignInConflict`
    /// (replay), `PasswordAccountConflict` (`appleIDInUse`, `otherAppleID`, `passwordChanged`,
    /// `userGone`).
    public func bindAppleID(_ binding: AppleBinding, now: Int64) async throws -> (user: UserRecord, session: NewSession?) {
        let (vault, outbox) = (self.vault, self.outbox)
        return try await Self.mappingReplay {
            try await engine.write { connection in
                let write = binding.write
                if let nonce = write.nonce, let conflict = SignInConflict(try ReplayGuard.consumeNonce(nonce, now: now, in: connection)) {
                    throw conflict
                }
                try ReplayGuard.recordUsedToken(write.tokenHash, expiresAt: write.tokenExpiresAt, in: connection)
                let identity = write.identity
                // Taken before the user's lock, in the order a sign-in takes them: the two never deadlock.
                let adopted = try PendingProfileStore.adopt(appleSub: identity.appleSub, now: now, in: connection)
                let before = try Self.lockedUser(binding.userID, in: connection)
                if let sessionID = binding.sessionID,
                   try connection.queryOne("SELECT 1 FROM sessions WHERE id = ? AND user_id = ?", [.text(sessionID), .text(binding.userID)]) == nil
                {
                    throw PasswordAccountConflict.userGone
                }
                if let holder = try UserStore.user(appleSub: identity.appleSub, in: connection), holder.id != binding.userID {
                    throw PasswordAccountConflict.appleIDInUse
                }
                if let current = before.appleSub, current != identity.appleSub { throw PasswordAccountConflict.otherAppleID }
                if let checked = binding.removingPassword {
                    guard try Self.credential(userID: binding.userID, in: connection)?.hash == checked else {
                        throw PasswordAccountConflict.passwordChanged
                    }
                    try connection.run("DELETE FROM password_credentials WHERE user_id = ?", [.text(binding.userID)])
                } else if let credential = try Self.credential(userID: binding.userID, in: connection), !credential.emailVerified {
                    // docs/guides/passwords-and-email.md: an unproven email carries no identity into the account.
                    throw PasswordAccountConflict.emailUnverified
                }
                // The name Apple sends once fills in only what the user has not given.
                let profile = write.profile ?? adopted?.profile
                try connection.run(
                    "UPDATE users SET apple_sub = ?, apple_credential = 'authorized', given_name = COALESCE(given_name, ?), family_name = COALESCE(family_name, ?), updated_at = ? WHERE id = ?",
                    [.text(identity.appleSub), Self.nonEmpty(profile?.givenName), Self.nonEmpty(profile?.familyName), .integer(now), .text(binding.userID)])
                // The token's email, its verification and privacy win, as at every sign-in.
                _ = try UserStore.upsertOnSignIn(in: connection, identity: identity, profile: nil, now: now)
                try Self.proveAppleEmail(identity, userID: binding.userID, now: now, outbox: outbox, in: connection)
                if let grant = write.appleTokens {
                    try vault.store(
                        in: connection, userID: binding.userID, clientID: grant.clientID, refreshToken: grant.refreshToken,
                        accessToken: grant.accessToken, now: now)
                }
                let after = try Self.existingUser(binding.userID, in: connection)
                try outbox.appendIfChanged(from: before, to: after, now: now, in: connection)
                let audit = write.audit
                if binding.removingPassword != nil {
                    try AuditTrail.record(.passwordRemoved, userID: binding.userID, context: audit, now: now, in: connection)
                }
                if before.appleSub == nil {
                    try AuditTrail.record(.appleIDLinked, userID: binding.userID, context: audit, now: now, in: connection)
                    let device = try write.deviceName ?? Self.deviceName(sessionID: binding.sessionID, in: connection)
                    try Self.noticeSecurityChange("apple_linked", user: after, device: device, now: now, outbox: outbox, in: connection)
                }
                let session = binding.makesSession
                    ? try SessionStore.create(
                        in: connection, userID: binding.userID, deviceName: write.deviceName, now: now, ttl: write.sessionTTL,
                        origin: SessionOrigin(method: .upgrade, write.audit), outbox: outbox)
                    : nil
                if let session {
                    try AuditTrail.recordSignIn(binding.userID, session: session.record.id, method: .upgrade, created: false, context: audit, now: now, in: connection)
                }
                return (after, session)
            }
        }
    }

    /// `DELETE /api/account/apple`: the Apple ID is unbound and its token (refresh, else
    /// access) goes into the revocation queue, due at `firstAttemptAt`, in one transaction with
    /// `user.updated`. Only while the user has a password (else `lastSignInMethod`); a user
    /// without an Apple ID is returned unchanged. `sessionID` names the device in the security
    /// notice.
    public func unbindAppleID(
        userID: String, sessionID: String? = nil, now: Int64, firstAttemptAt: Int64, audit: AuditContext = AuditContext(actor: .user)
    ) async throws -> UserRecord {
        let (vault, queue, outbox) = (self.vault, revocations, self.outbox)
        return try await engine.write { connection in
            let before = try Self.lockedUser(userID, in: connection)
            guard before.appleSub != nil else { return before }
            guard before.hasPassword else { throw PasswordAccountConflict.lastSignInMethod }
            if let tokens = try vault.load(userID: userID, in: connection) {
                let token = tokens.refreshToken.map { ($0, TokenKind.refresh) } ?? tokens.accessToken.map { ($0, TokenKind.access) }
                if let (value, kind) = token {
                    try queue.enqueue(
                        in: connection, userID: nil, clientID: tokens.clientID, token: value, kind: kind, now: now, firstAttemptAt: firstAttemptAt)
                    try AuditTrail.recordTokensRevoked(userID: userID, kind: kind, now: now, in: connection)
                }
                _ = try AppleTokenVault.drop(userID: userID, in: connection)
            }
            try connection.run(
                "UPDATE users SET apple_sub = NULL, apple_credential = 'authorized', updated_at = ? WHERE id = ?", [.integer(now), .text(userID)])
            let after = try Self.existingUser(userID, in: connection)
            try outbox.appendIfChanged(from: before, to: after, now: now, in: connection)
            try AuditTrail.record(.appleIDUnlinked, userID: userID, context: audit, now: now, in: connection)
            try Self.noticeSecurityChange(
                "apple_unlinked", user: after, device: try Self.deviceName(sessionID: sessionID, in: connection), now: now, outbox: outbox,
                in: connection)
            return after
        }
    }
}
