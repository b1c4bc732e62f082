import PostgreSQL
import SQLite
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

/// What applying a notification did.
public enum NotificationOutcome: String, Sendable {
    case processed, duplicate, ignored
}

extension Store {
    /// Deletes a user: at once every session ends and the user can no longer be read; Apple's
    /// token (the refresh token, else the access token) goes into the revocation queue in the
    /// same transaction, first due at `firstAttemptAt`. Returns the queued revocation, if any.
    public func deleteUser(userID: String, now: Int64, firstAttemptAt: Int64) async throws -> PendingRevocation? {
        let vault = self.vault
        let queue = revocations
        return try await engine.write { connection in
            var pending: PendingRevocation?
            if let tokens = try vault.load(userID: userID, in: connection) {
                let token = tokens.refreshToken.map { ($0, TokenKind.refresh) } ?? tokens.accessToken.map { ($0, TokenKind.access) }
                if let (value, kind) = token {
                    let id = try queue.enqueue(
                        in: connection, userID: nil, clientID: tokens.clientID, token: value, kind: kind, now: now, firstAttemptAt: firstAttemptAt)
                    pending = PendingRevocation(id: id, clientID: tokens.clientID, token: value, kind: kind, attempts: 0, createdAt: now)
                }
            }
            // Sessions and stored tokens go with the user (ON DELETE CASCADE).
            _ = try UserStore.delete(in: connection, userID: userID)
            return pending
        }
    }

    /// Applies a notification's events and records its `jti`, in one transaction: a
    /// redelivery changes nothing. With several events the outcome is `processed` when any
    /// was applied to a known user.
    public func applyNotification(
        _ events: [AccountEvent], jti: String, now: Int64
    ) async throws -> (outcome: NotificationOutcome, perEvent: [NotificationOutcome]) {
        try await engine.write { connection in
            if try NotificationLedger.status(jti: jti, in: connection) != nil {
                return (.duplicate, events.map { _ in .duplicate })
            }
            var outcomes: [NotificationOutcome] = []
            for event in events {
                outcomes.append(try Self.apply(event, now: now, in: connection))
            }
            let outcome: NotificationOutcome = outcomes.contains(.processed) ? .processed : .ignored
            _ = try NotificationLedger.recordIfNew(jti: jti, status: outcome.rawValue, now: now, in: connection)
            return (outcome, outcomes)
        }
    }

    private static func apply(_ event: AccountEvent, now: Int64, in connection: any SQLConnection) throws -> NotificationOutcome {
        guard let user = try UserStore.user(appleSub: event.subject, in: connection) else { return .ignored }
        switch event.kind {
        case .emailDisabled:
            _ = try UserStore.setEmailForwarding(in: connection, appleSub: event.subject, enabled: false, now: now)
        case .emailEnabled:
            _ = try UserStore.setEmailForwarding(
                in: connection, appleSub: event.subject, enabled: true, email: event.email, isPrivateEmail: event.isPrivateEmail, now: now)
        case .consentRevoked:
            _ = try UserStore.markRevoked(in: connection, userID: user.id, now: now)
        case .accountDeleted:
            // Apple has already invalidated the tokens: nothing to revoke, only to forget.
            _ = try UserStore.delete(in: connection, userID: user.id)
        case .other:
            return .ignored
        }
        return .processed
    }

    /// Apple refused the refresh token stored at `storedAt`: the user's credential is marked
    /// revoked and their sessions end, unless a sign-in stored newer tokens meanwhile (false).
    public func markRevokedIfTokensUnchanged(userID: String, storedAt: Int64, now: Int64) async throws -> Bool {
        try await engine.write { connection -> Bool in
            guard let row = try connection.queryOne("SELECT updated_at FROM apple_tokens WHERE user_id = ?", [.text(userID)]),
                  try row.int64(0) == storedAt
            else { return false }
            return try UserStore.markRevoked(in: connection, userID: userID, now: now)
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
    static let housekeepingLock = PostgresConnection.advisoryLockKey("siwa-server housekeeping")

    /// Housekeeping's deletes in one transaction: sessions past their absolute or idle expiry,
    /// replay marks, nonces, pending profiles and web sign-ins past theirs. Of several
    /// instances one at a time does it: on PostgreSQL the transaction first takes an advisory
    /// lock without waiting, and nil means another instance holds it. Returns the rows deleted.
    public func pruneExpired(now: Int64, idleTTL: Int64) async throws -> Int? {
        try await engine.write { connection -> Int? in
            if connection.dialect == .postgres {
                let taken = try connection.queryOne("SELECT pg_try_advisory_xact_lock(?)", [.integer(Self.housekeepingLock)])?.int(0)
                guard taken == 1 else { return nil }
            }
            return try SessionStore.pruneExpired(in: connection, now: now, idleTTL: idleTTL)
                + ReplayGuard.prune(in: connection, now: now)
                + PendingProfileStore.prune(in: connection, now: now)
                + WebSignInStore.prune(in: connection, now: now)
        }
    }
}
