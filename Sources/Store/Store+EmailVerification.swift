import OpenSSLCrypto
import SQLRow
import WireFormat

/// docs/guides/passwords-and-email.md: proving a password's email, and what an unproven one may not do.
extension Store {
    // MARK: - Issuing codes

    /// Stores `code` for the password of `userID` and sends it to `email`, in the caller's
    /// transaction, unless the address has had its codes of that kind for the hour (nothing is
    /// stored then: `rateLimited`). A user keeps at most `EmailCode.livePerUser` live codes of a
    /// kind: the oldest go.
    static func issue(
        _ code: EmailCode, userID: String, email: String, now: Int64, outbox: WebhookOutbox, in connection: any SQLConnection
    ) throws -> EmailCode.Outcome {
        guard try countSend(code.kind, email: email, now: now, in: connection) else {
            try AuditTrail.record(
                .emailSuppressed, userID: userID, detail: AuditTrail.detail(["kind": code.kind.rawValue, "reason": "rate"]), context: .system,
                now: now, in: connection)
            return .rateLimited
        }
        let table = code.kind.table
        try connection.run(
            "INSERT INTO \(table)(code_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
            [.blob(code.codeHash), .text(userID), .integer(now), .integer(code.expiresAt)])
        try connection.run(
            """
            DELETE FROM \(table) WHERE user_id = ? AND code_hash NOT IN (
                SELECT code_hash FROM \(table) WHERE user_id = ? ORDER BY created_at DESC, code_hash LIMIT ?)
            """,
            [.text(userID), .text(userID), .integer(Int64(EmailCode.livePerUser))])
        try sendCode(code, userID: userID, email: email, now: now, outbox: outbox, in: connection)
        return .issued
    }

    /// How a code reaches its inbox: with `smtp_url`, a message of the code's kind, its values
    /// sealed with `data_key` while it waits (the link is made at delivery, from `public_url`),
    /// and no webhook; else the team's backend gets it in a webhook event (sealed likewise) and
    /// mails it.
    static func sendCode(
        _ code: EmailCode, userID: String, email: String, now: Int64, outbox: WebhookOutbox, in connection: any SQLConnection
    ) throws {
        if outbox.mail.isOn {
            let user = try existingUser(userID, in: connection)
            try outbox.mail.enqueue(
                code.kind.rawValue, to: user, address: email, values: ["code": code.code, "expires_at": String(code.expiresAt)], sealed: true,
                now: now, in: connection)
            return
        }
        switch code.kind {
        case .verifyEmail:
            try outbox.append(
                .userEmailVerificationRequested,
                .emailVerificationRequested(userID: userID, email: email, code: code.code, expiresAt: code.expiresAt), now: now, in: connection)
        case .passwordReset:
            try outbox.append(
                .userPasswordResetRequested,
                .passwordResetRequested(userID: userID, email: email, code: code.code, expiresAt: code.expiresAt), now: now, in: connection)
        }
    }

    /// Counts one code of `kind` to `email` in its hour; false when that is one too many.
    private static func countSend(_ kind: EmailCode.Kind, email: String, now: Int64, in connection: any SQLConnection) throws -> Bool {
        let key = SHA256.hash("\(kind.rawValue)\u{0}" + EmailAddress.normalized(email))
        let ends = now + EmailCode.sendWindow
        let row = try connection.queryOne(
            """
            INSERT INTO email_code_sends(key, sent, window_ends_at) VALUES (?, 1, ?)
            ON CONFLICT(key) DO UPDATE SET
                sent = CASE WHEN email_code_sends.window_ends_at <= ? THEN 1 ELSE email_code_sends.sent + 1 END,
                window_ends_at = CASE WHEN email_code_sends.window_ends_at <= ? THEN ? ELSE email_code_sends.window_ends_at END
            RETURNING sent
            """,
            [.blob(key), .integer(ends), .integer(now), .integer(now), .integer(ends)])
        return try (row?.int64("sent") ?? 1) <= EmailCode.perAddressPerHour
    }

    /// `POST /api/account/email/verify-request`: a new `verify_email` code for the user's
    /// password email while it is unproven (`notNeeded` when it is proven, or there is no
    /// password).
    public func requestEmailVerification(userID: String, code: EmailCode, now: Int64) async throws -> EmailCode.Outcome {
        let outbox = self.outbox
        return try await engine.write { connection in
            guard let credential = try Self.credential(userID: userID, in: connection), !credential.emailVerified else { return .notNeeded }
            return try Self.issue(code, userID: userID, email: credential.email, now: now, outbox: outbox, in: connection)
        }
    }

    // MARK: - Proving

    /// `POST /api/auth/email/verify`: uses the code up whatever follows; when it was live, the
    /// password's email is proven (`proveCredential`). nil for a code unknown, used or expired.
    public func verifyEmail(codeHash: [UInt8], now: Int64, audit: AuditContext = AuditContext(actor: .user)) async throws -> UserRecord? {
        let outbox = self.outbox
        return try await engine.write { connection -> UserRecord? in
            guard let row = try connection.queryOne(
                "DELETE FROM email_verification_codes WHERE code_hash = ? RETURNING user_id, expires_at", [.blob(codeHash)]),
                try row.int64("expires_at") > now,
                let credential = try Self.credential(userID: try row.string("user_id"), in: connection)
            else { return nil }
            let before = try Self.existingUser(credential.userID, in: connection)
            try Self.proveCredential(credential, now: now, outbox: outbox, in: connection)
            let after = try Self.existingUser(credential.userID, in: connection)
            try outbox.appendIfChanged(from: before, to: after, now: now, in: connection)
            if !credential.emailVerified {
                try AuditTrail.record(.emailVerified, userID: credential.userID, context: audit, now: now, in: connection)
            }
            return after
        }
    }

    /// A code reached the inbox of `credential`'s email: the credential is verified, and so is
    /// the user's email when it is that address; the user's verification codes are void; and
    /// the address is claimed from every other user (`claimEmail`).
    static func proveCredential(_ credential: PasswordCredential, now: Int64, outbox: WebhookOutbox, in connection: any SQLConnection) throws {
        try connection.run("UPDATE password_credentials SET email_verified = 1 WHERE user_id = ?", [.text(credential.userID)])
        try connection.run(
            "UPDATE users SET email_verified = 1, updated_at = ? WHERE id = ? AND \(EmailAddress.folded("email", connection.dialect)) = ? AND email_verified = 0",
            [.integer(now), .text(credential.userID), .text(credential.email)])
        try connection.run("DELETE FROM email_verification_codes WHERE user_id = ?", [.text(credential.userID)])
        try claimEmail(credential.email, by: credential.userID, now: now, outbox: outbox, in: connection)
    }

    /// A Sign in with Apple (or an Apple ID bound) whose token carries a verified, non-relay
    /// email proves it for `userID`: its own password with that email is verified, and the
    /// address is claimed from every other user.
    static func proveAppleEmail(_ identity: VerifiedIdentity, userID: String, now: Int64, outbox: WebhookOutbox, in connection: any SQLConnection) throws {
        guard let email = identity.email, identity.emailVerified, !identity.isPrivateEmail else { return }
        let normalized = EmailAddress.normalized(email)
        try connection.run(
            "UPDATE password_credentials SET email_verified = 1 WHERE user_id = ? AND email = ?", [.text(userID), .text(normalized)])
        try claimEmail(normalized, by: userID, now: now, outbox: outbox, in: connection)
    }

    /// Every other user whose password holds `normalized` unproven and who has no Apple ID is
    /// deleted (`user.deleted`, reason `email_claimed`): an unproven claim does not outlive its
    /// owner's proof. Such a user has no Apple tokens to revoke.
    private static func claimEmail(_ normalized: String, by userID: String, now: Int64, outbox: WebhookOutbox, in connection: any SQLConnection) throws {
        // On PostgreSQL the rows are locked and the conditions read again after any wait: a
        // squatter upgrading to an Apple ID at this moment is no longer one.
        let locking = connection.dialect == .postgres ? " FOR UPDATE OF u, p" : ""
        let squatters = try connection.query(
            """
            SELECT p.user_id FROM password_credentials p JOIN users u ON u.id = p.user_id
            WHERE p.email = ? AND p.email_verified = 0 AND u.apple_sub IS NULL AND u.id <> ?\(locking)
            """,
            [.text(normalized), .text(userID)]
        ).map { try $0.string("user_id") }
        for id in squatters {
            guard let user = try UserStore.user(id: id, in: connection), try UserStore.delete(in: connection, userID: id) else { continue }
            try outbox.append(.userDeleted, .deleted(user, reason: .emailClaimed), now: now, in: connection)
            try AuditTrail.record(
                .userDeleted, userID: id, detail: AuditTrail.detail(["reason": DeletionReason.emailClaimed.rawValue]), context: .system, now: now,
                in: connection)
        }
    }

    /// A reset proved an email that was unproven until then: the Apple ID bound meanwhile is
    /// unbound, its token (refresh, else access) queued for revocation at once, and the user's
    /// email becomes the password's, verified.
    static func unbindUnprovenAppleID(
        _ credential: PasswordCredential, now: Int64, vault: AppleTokenVault, queue: RevocationQueue, in connection: any SQLConnection
    ) throws {
        if let tokens = try vault.load(userID: credential.userID, in: connection) {
            let token = tokens.refreshToken.map { ($0, TokenKind.refresh) } ?? tokens.accessToken.map { ($0, TokenKind.access) }
            if let (value, kind) = token {
                _ = try queue.enqueue(in: connection, userID: nil, clientID: tokens.clientID, token: value, kind: kind, now: now, firstAttemptAt: now)
                try AuditTrail.recordTokensRevoked(userID: credential.userID, kind: kind, now: now, in: connection)
            }
            _ = try AppleTokenVault.drop(userID: credential.userID, in: connection)
        }
        try connection.run(
            """
            UPDATE users SET apple_sub = NULL, apple_credential = 'authorized', email = ?, email_verified = 1, is_private_email = 0,
                email_forwarding = NULL, updated_at = ?
            WHERE id = ?
            """,
            [.text(credential.email), .integer(now), .text(credential.userID)])
    }

    static func pruneEmailCodes(in connection: any SQLConnection, now: Int64) throws -> Int {
        try connection.run("DELETE FROM email_verification_codes WHERE expires_at <= ?", [.integer(now)])
            + connection.run("DELETE FROM email_code_sends WHERE window_ends_at <= ?", [.integer(now)])
    }
}
