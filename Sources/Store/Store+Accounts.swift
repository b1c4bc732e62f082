import SQLRow
import WireFormat

/// What Apple's server-to-server notifications ask of an account (APPLE.md §7).
public struct AccountEvent: Sendable {
    public enum Kind: Sendable {
        case emailDisabled
        case emailEnabled
        case consentRevoked
        case accountDeleted
        /// A type this server does not act on.
        case other
    }

    public let kind: Kind
    /// Apple's `sub` of the user.
    public let subject: String
    public let email: String?
    public let isPrivateEmail: Bool?

    public init(kind: Kind, subject: String, email: String? = nil, isPrivateEmail: Bool? = nil) {
        self.kind = kind
        self.subject = subject
        self.email = email
        self.isPrivateEmail = isPrivateEmail
    }
}

/// What deleting a user did.
public struct UserDeletion: Sendable {
    /// The user as it was.
    public let user: UserRecord
    /// The revocation queued at Apple; nil when no Apple token was stored.
    public let revocation: PendingRevocation?
}

/// What applying a notification did.
public enum NotificationOutcome: String, Sendable {
    case processed, duplicate, ignored
}

extension Store {
    /// Deletes a user: at once every session ends and the user can no longer be read; Apple's
    /// token (the refresh token, else the access token) goes into the revocation queue in the
    /// same transaction, first due at `firstAttemptAt`, and so does the `user.deleted` event
    /// with its `reason`. nil when there is no such user (nothing changes).
    public func deleteUser(
        userID: String, reason: DeletionReason = .accountDeleted, now: Int64, firstAttemptAt: Int64,
        audit: AuditContext = AuditContext(actor: .user)
    ) async throws -> UserDeletion? {
        let vault = self.vault
        let queue = revocations
        let outbox = self.outbox
        let deletion = try await engine.write { connection -> UserDeletion? in
            guard let user = try UserStore.user(id: userID, in: connection) else { return nil }
            var pending: PendingRevocation?
            if let tokens = try vault.load(userID: userID, in: connection) {
                let token = tokens.refreshToken.map { ($0, TokenKind.refresh) } ?? tokens.accessToken.map { ($0, TokenKind.access) }
                if let (value, kind) = token {
                    let id = try queue.enqueue(
                        in: connection, userID: nil, clientID: tokens.clientID, token: value, kind: kind, now: now, firstAttemptAt: firstAttemptAt)
                    pending = PendingRevocation(id: id, clientID: tokens.clientID, token: value, kind: kind, attempts: 0, createdAt: now)
                    try AuditTrail.recordTokensRevoked(userID: userID, kind: kind, now: now, in: connection)
                }
            }
            // Sessions first, each recorded; stored tokens go with the user (ON DELETE CASCADE).
            try SessionStore.endAll(
                userID: userID, reason: reason == .admin ? .admin : .accountDeleted, context: audit, now: now, outbox: outbox, in: connection)
            _ = try UserStore.delete(in: connection, userID: userID)
            try outbox.append(.userDeleted, .deleted(user, reason: reason), now: now, in: connection)
            try AuditTrail.record(.userDeleted, userID: userID, detail: AuditTrail.detail(["reason": reason.rawValue]), context: audit, now: now, in: connection)
            if reason == .accountDeleted { try Self.noticeAccountDeleted(user, now: now, outbox: outbox, in: connection) }
            return UserDeletion(user: user, revocation: pending)
        }
        if deletion != nil { sessions.dropCached(userID: userID) }
        return deletion
    }

    /// Applies a notification's events and records its `jti`, in one transaction: a
    /// redelivery changes nothing. With several events the outcome is `processed` when any
    /// was applied to a known user.
    public func applyNotification(
        _ events: [AccountEvent], jti: String, now: Int64
    ) async throws -> (outcome: NotificationOutcome, perEvent: [NotificationOutcome]) {
        let outbox = self.outbox
        return try await engine.write { connection in
            if try NotificationLedger.status(jti: jti, in: connection) != nil {
                return (.duplicate, events.map { _ in .duplicate })
            }
            var outcomes: [NotificationOutcome] = []
            for event in events {
                outcomes.append(try Self.apply(event, now: now, outbox: outbox, in: connection))
            }
            let outcome: NotificationOutcome = outcomes.contains(.processed) ? .processed : .ignored
            _ = try NotificationLedger.recordIfNew(jti: jti, status: outcome.rawValue, now: now, in: connection)
            return (outcome, outcomes)
        }
    }

    private static func apply(
        _ event: AccountEvent, now: Int64, outbox: WebhookOutbox, in connection: any SQLConnection
    ) throws -> NotificationOutcome {
        guard let user = try UserStore.user(appleSub: event.subject, in: connection) else { return .ignored }
        let audit = AuditContext.apple
        switch event.kind {
        case .emailDisabled:
            if try UserStore.setEmailForwarding(in: connection, appleSub: event.subject, enabled: false, now: now) {
                try outbox.appendIfChanged(from: user, to: UserStore.user(id: user.id, in: connection), now: now, in: connection)
                try AuditTrail.record(.appleEmailDisabled, userID: user.id, context: audit, now: now, in: connection)
            }
        case .emailEnabled:
            let changed = try UserStore.setEmailForwarding(
                in: connection, appleSub: event.subject, enabled: true, email: event.email, isPrivateEmail: event.isPrivateEmail, now: now)
            if changed {
                try outbox.appendIfChanged(from: user, to: UserStore.user(id: user.id, in: connection), now: now, in: connection)
                try AuditTrail.record(.appleEmailEnabled, userID: user.id, context: audit, now: now, in: connection)
            }
        case .consentRevoked:
            if try markRevoked(user, reason: .appleConsentRevoked, context: audit, now: now, outbox: outbox, in: connection) {
                try AuditTrail.record(.appleConsentRevoked, userID: user.id, context: audit, now: now, in: connection)
            }
        case .accountDeleted:
            // Apple has already invalidated the tokens: nothing to revoke, only to forget.
            try SessionStore.endAll(userID: user.id, reason: .appleAccountDeleted, context: audit, now: now, outbox: outbox, in: connection)
            if try UserStore.delete(in: connection, userID: user.id) {
                try outbox.append(.userDeleted, .deleted(user, reason: .appleAccountDeleted), now: now, in: connection)
                try AuditTrail.record(.appleAccountDeleted, userID: user.id, context: audit, now: now, in: connection)
                try AuditTrail.record(
                    .userDeleted, userID: user.id, detail: AuditTrail.detail(["reason": DeletionReason.appleAccountDeleted.rawValue]), context: audit,
                    now: now, in: connection)
            }
        case .other:
            return .ignored
        }
        return .processed
    }

    /// Marks the credential revoked and ends the sessions; `user.consent_revoked` when that
    /// changed anything.
    @discardableResult
    private static func markRevoked(
        _ user: UserRecord, reason: SessionEndReason, context: AuditContext, now: Int64, outbox: WebhookOutbox, in connection: any SQLConnection
    ) throws -> Bool {
        // The sessions end here, each recorded, before the mark (which then finds none).
        let ended = try SessionStore.endAll(userID: user.id, reason: reason, context: context, now: now, outbox: outbox, in: connection)
        guard try UserStore.markRevoked(in: connection, userID: user.id, now: now) || ended > 0 else { return false }
        if let after = try UserStore.user(id: user.id, in: connection) {
            try outbox.append(.userConsentRevoked, .user(after), now: now, in: connection)
        }
        return true
    }

    /// Apple refused the refresh token stored at `storedAt`: the user's credential is marked
    /// revoked and their sessions end, unless a sign-in stored newer tokens meanwhile (false).
    public func markRevokedIfTokensUnchanged(userID: String, storedAt: Int64, now: Int64) async throws -> Bool {
        let outbox = self.outbox
        return try await engine.write { connection -> Bool in
            guard let row = try connection.queryOne("SELECT updated_at FROM apple_tokens WHERE user_id = ?", [.text(userID)]),
                  try row.int64(0) == storedAt,
                  let user = try UserStore.user(id: userID, in: connection)
            else { return false }
            let audit = AuditContext.system
            guard try Self.markRevoked(user, reason: .refreshRefused, context: audit, now: now, outbox: outbox, in: connection) else { return false }
            try AuditTrail.record(.appleRefreshRefused, userID: userID, context: audit, now: now, in: connection)
            return true
        }
    }

    /// Queues the revocation of tokens that belong to nobody here (a refused sign-in's grant).
    @discardableResult
    public func queueRevocation(clientID: String, token: String, kind: TokenKind, now: Int64) async throws -> Int64 {
        let queue = revocations
        return try await engine.write { connection in
            try queue.enqueue(in: connection, userID: nil, clientID: clientID, token: token, kind: kind, now: now, firstAttemptAt: now)
        }
    }
}

extension Store {
    /// The advisory lock that makes housekeeping one instance's job at a time (PostgreSQL).
    static let housekeepingLock = PostgresEngine.advisoryLockKey("siwa-server housekeeping")

    /// Housekeeping's deletes in one transaction: sessions past their absolute or idle expiry,
    /// replay marks, nonces, pending profiles, web sign-ins, app return codes, password reset
    /// codes and attempt counters past theirs, and signing keys a day after they were retired.
    /// Of several instances one at a time does it: on PostgreSQL the transaction first takes an
    /// advisory lock without waiting, and nil means another instance holds it. Returns the rows
    /// deleted.
    public func pruneExpired(now: Int64, idleTTL: Int64) async throws -> Int? {
        try await engine.write { connection -> Int? in
            if connection.dialect == .postgres {
                let taken = try connection.queryOne("SELECT pg_try_advisory_xact_lock(?)", [.integer(Self.housekeepingLock)])?.bool(0)
                guard taken == true else { return nil }
            }
            return try SessionStore.pruneExpired(in: connection, now: now, idleTTL: idleTTL)
                + ReplayGuard.prune(in: connection, now: now)
                + PendingProfileStore.prune(in: connection, now: now)
                + WebSignInStore.prune(in: connection, now: now)
                + ConsoleSessionStore.prune(in: connection, now: now)
                + Self.pruneAppReturnCodes(in: connection, now: now)
                + SigningKeyStore.prune(in: connection, now: now)
                + Self.prunePasswordRecords(in: connection, now: now)
                + Self.pruneEmailCodes(in: connection, now: now)
        }
    }
}

/// `external_id` is unique: another user already has the value asked for.
public struct ExternalIDTaken: Error, Equatable, Sendable {}

extension Store {
    /// Sets (or with nil clears) the team's own id for a user, with `user.updated` when it
    /// changed. Returns nil for an unknown user; throws `ExternalIDTaken` when another user has
    /// the value (checked first, and by the unique index should two instances race).
    public func setExternalID(
        userID: String, externalID: String?, now: Int64, audit: AuditContext = .admin
    ) async throws -> UserRecord? {
        let outbox = self.outbox
        do {
            return try await engine.write { connection -> UserRecord? in
                guard let before = try UserStore.user(id: userID, in: connection) else { return nil }
                guard before.externalID != externalID else { return before }
                if let externalID, let holder = try connection.queryOne("SELECT id FROM users WHERE external_id = ?", [.text(externalID)]),
                   try holder.string(0) != userID
                {
                    throw ExternalIDTaken()
                }
                try connection.run(
                    "UPDATE users SET external_id = ?, updated_at = ? WHERE id = ?",
                    [externalID.map(SQLValue.text) ?? .null, .integer(now), .text(userID)])
                let after = try UserStore.user(id: userID, in: connection)
                try outbox.appendIfChanged(from: before, to: after, now: now, in: connection)
                try AuditTrail.recordUpdate(from: before, to: after, context: audit, now: now, in: connection)
                return after
            }
        } catch StoreError.uniqueViolation {
            throw ExternalIDTaken()
        }
    }
}
