import SQLRow

/// Apple's tokens from a code exchange, sealed into the user's row by the sign-in's commit.
public struct AppleTokenGrant: Sendable {
    public let clientID: String
    public let refreshToken: String?
    public let accessToken: String?

    public init(clientID: String, refreshToken: String?, accessToken: String?) {
        self.clientID = clientID
        self.refreshToken = refreshToken
        self.accessToken = accessToken
    }
}

/// Everything a successful sign-in writes: the used-token mark, the user, Apple's tokens and
/// the session, in one transaction and one commit.
public struct SignInWrite: Sendable {
    public var identity: VerifiedIdentity
    /// Name and email the client sent with this sign-in (else a pending profile is adopted).
    public var profile: ClientProfile?
    /// SHA-256 of the identity token: recorded so it never makes a second session.
    public var tokenHash: [UInt8]
    /// Until when the mark is kept (after that the token is refused as expired anyway).
    public var tokenExpiresAt: Int64
    /// A nonce to use up in this same transaction (a sign-in that does not call Apple first).
    public var nonce: String?
    public var appleTokens: AppleTokenGrant?
    public var deviceName: String?
    /// A new user's language (`en` or `ko`, docs/guides/passwords-and-email.md), from the request's `Accept-Language`.
    public var locale = "en"
    public var sessionTTL: Int64
    /// How the session is made (`sign_in.succeeded`'s `method`).
    public var method = SignInMethod.apple
    /// Who signs in and from where, for the audit events of the sign-in's transaction.
    public var audit = AuditContext(actor: .user)

    public init(identity: VerifiedIdentity, tokenHash: [UInt8], tokenExpiresAt: Int64, sessionTTL: Int64) {
        self.identity = identity
        self.tokenHash = tokenHash
        self.tokenExpiresAt = tokenExpiresAt
        self.sessionTTL = sessionTTL
    }
}

/// A web sign-in's way back to an app (docs/guides/connecting-your-backend.md): SHA-256 of the one-time code put on the app
/// URL, the app's S256 `code_challenge`, and when the code stops working.
public struct AppReturnGrant: Sendable {
    public let codeHash: [UInt8]
    public let codeChallenge: String
    public let expiresAt: Int64

    public init(codeHash: [UInt8], codeChallenge: String, expiresAt: Int64) {
        self.codeHash = codeHash
        self.codeChallenge = codeChallenge
        self.expiresAt = expiresAt
    }
}

/// Why a sign-in's write was refused; the transaction kept nothing of it.
public enum SignInConflict: Error, Equatable, Sendable {
    /// The identity token already made a session.
    case tokenReplayed
    /// The server-issued nonce was used before.
    case nonceReplayed
    /// The server-issued nonce is past its 10 minutes.
    case nonceExpired
    /// docs/guides/passwords-and-email.md "No silent merges": the token's verified, non-relay email is another user's
    /// password email and its `sub` is not yet known.
    case accountExists

    init?(_ use: NonceUse) {
        switch use {
        case .alreadyUsed: self = .nonceReplayed
        case .expired: self = .nonceExpired
        case .consumed, .notIssued: return nil
        }
    }
}

extension Store {
    public struct SignedIn: Sendable {
        public let user: UserRecord
        public let session: NewSession
        public let created: Bool
        /// A password sign-up's email code: sent, or not for the address's hourly limit.
        public var verification: EmailCode.Outcome? = nil
    }

    /// Commits a verified sign-in. Throws `SignInConflict` (and keeps nothing) for a replayed
    /// token or a used or expired nonce.
    public func completeSignIn(_ write: SignInWrite, now: Int64) async throws -> SignedIn {
        let (vault, outbox) = (self.vault, self.outbox)
        return try await Self.mappingReplay {
            try await engine.write { connection in
                let (user, created) = try Self.commitSignIn(write, now: now, vault: vault, outbox: outbox, in: connection)
                let session = try SessionStore.create(
                    in: connection, userID: user.id, deviceName: write.deviceName, now: now, ttl: write.sessionTTL,
                    origin: SessionOrigin(method: write.method, write.audit), outbox: outbox)
                try AuditTrail.recordSignIn(user.id, session: session.record.id, method: write.method, created: created, context: write.audit, now: now, in: connection)
                return SignedIn(user: user, session: session, created: created)
            }
        }
    }

    /// Commits a verified web sign-in that returns to an app (docs/guides/connecting-your-backend.md): everything
    /// `completeSignIn` writes except the session, and instead a one-time code bound to the
    /// app's PKCE challenge, which `redeemAppReturnCode` turns into the session.
    public func completeSignIn(_ write: SignInWrite, returningToApp grant: AppReturnGrant, now: Int64) async throws -> (user: UserRecord, created: Bool) {
        let (vault, outbox) = (self.vault, self.outbox)
        return try await Self.mappingReplay {
            try await engine.write { connection in
                let (user, created) = try Self.commitSignIn(write, now: now, vault: vault, outbox: outbox, in: connection)
                try connection.run(
                    "INSERT INTO app_return_codes(code_hash, user_id, code_challenge, created, expires_at) VALUES (?, ?, ?, ?, ?)",
                    [.blob(grant.codeHash), .text(user.id), .text(grant.codeChallenge), SQLValue(created), .integer(grant.expiresAt)])
                return (user, created)
            }
        }
    }

    /// `POST /api/auth/exchange`: uses the code up, whatever follows, and when it is live and
    /// `verifies` accepts its stored challenge, makes the session, in the same transaction.
    /// nil for a code that is unknown, used, expired or whose verifier does not match.
    public func redeemAppReturnCode(
        codeHash: [UInt8], verifies: @escaping @Sendable (_ challenge: String) -> Bool, deviceName: String?, sessionTTL: Int64, now: Int64,
        audit: AuditContext = AuditContext(actor: .user)
    ) async throws -> SignedIn? {
        let outbox = self.outbox
        return try await engine.write { connection -> SignedIn? in
            guard let row = try connection.queryOne(
                "DELETE FROM app_return_codes WHERE code_hash = ? RETURNING user_id, code_challenge, created, expires_at", [.blob(codeHash)]),
                try row.int64("expires_at") > now, verifies(try row.string("code_challenge")),
                let user = try UserStore.user(id: try row.string("user_id"), in: connection)
            else { return nil }
            let session = try SessionStore.create(
                in: connection, userID: user.id, deviceName: deviceName, now: now, ttl: sessionTTL, origin: SessionOrigin(method: .exchange, audit),
                outbox: outbox)
            let created = try row.int64("created") != 0
            try AuditTrail.recordSignIn(user.id, session: session.record.id, method: .exchange, created: created, context: audit, now: now, in: connection)
            return SignedIn(user: user, session: session, created: created)
        }
    }

    /// The writes every sign-in shares: the nonce and token marks, the user (with its event),
    /// Apple's tokens.
    private static func commitSignIn(
        _ write: SignInWrite, now: Int64, vault: AppleTokenVault, outbox: WebhookOutbox, in connection: any SQLConnection
    ) throws -> (UserRecord, Bool) {
        // The reads and the token's mark depend on no answer of each other: on PostgreSQL they
        // go in one round trip (with BEGIN). Their outcomes are judged in the order a sign-in
        // meets them (a used token is refused before the nonce is looked at, as the read before
        // Apple does); a refusal rolls the mark back with the rest.
        let sub = write.identity.appleSub
        let nonce = write.nonce.map { ReplayGuard.nonceLookup($0, dialect: connection.dialect) }
        var found = try connection.queries(
            (nonce.map { [$0.statement] } ?? []) + [
                UserStore.lookup(appleSub: sub), PendingProfileStore.lookup(appleSub: sub),
                ReplayGuard.usedTokenMark(write.tokenHash, expiresAt: write.tokenExpiresAt),
            ])[...]
        try ReplayGuard.checkUsedTokenMark(found.removeLast())
        if let nonce, let conflict = SignInConflict(try ReplayGuard.consumeNonce(hash: nonce.hash, found: found.removeFirst().first, now: now, in: connection)) {
            throw conflict
        }
        // The user of this `sub`, read once: every step below that asks goes by this row.
        let known = try found.removeFirst().first.map(UserRecord.init)
        let pending = found.removeFirst().first
        if let refusal = try mergeRefusal(write.identity, knownUser: known, in: connection) { throw refusal }
        let adopted = try PendingProfileStore.adopt(appleSub: sub, found: pending, now: now, in: connection)
        // During a team transfer's window a user not yet imported arrives with the new team's
        // `sub` and their `transfer_sub`: they move to the new `sub` here, so they are not split.
        var moved: UserRecord?
        if let transferSub = write.identity.transferSub, known == nil {
            moved = try TeamTransferStore.moveOnSignIn(transferSub: transferSub, to: write.identity.appleSub, now: now, in: connection)
        }
        let before = moved ?? known
        let (user, created) = try UserStore.upsertOnSignIn(
            in: connection, identity: write.identity, existing: before, profile: write.profile ?? adopted?.profile, locale: write.locale,
            now: now)
        try proveAppleEmail(write.identity, userID: user.id, now: now, outbox: outbox, in: connection)
        if created {
            try outbox.append(.userCreated, .user(user), now: now, in: connection)
            try AuditTrail.record(.userCreated, userID: user.id, detail: AuditTrail.detail(["method": write.method.rawValue]), context: write.audit, now: now, in: connection)
        } else {
            try outbox.appendIfChanged(from: before, to: user, now: now, in: connection)
        }
        if let grant = write.appleTokens {
            try vault.store(
                in: connection, userID: user.id, clientID: grant.clientID, refreshToken: grant.refreshToken,
                accessToken: grant.accessToken, now: now)
        }
        return (user, created)
    }

    static func mappingReplay<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch ReplayError.tokenAlreadyUsed {
            throw SignInConflict.tokenReplayed
        }
    }

    static func pruneAppReturnCodes(in connection: any SQLConnection, now: Int64) throws -> Int {
        try connection.run("DELETE FROM app_return_codes WHERE expires_at <= ?", [.integer(now)])
    }

    /// Before a code goes to Apple, in one commit: the server-issued nonce is used up (so the
    /// code is sent at most once per nonce), and the name and email Apple sends only once are
    /// kept for the next sign-in of `appleSub` should this one fail.
    public func prepareCodeExchange(nonce: String?, appleSub: String, profile: ClientProfile?, now: Int64) async throws {
        let keptProfile = profile.flatMap { $0.givenName != nil || $0.familyName != nil || $0.email != nil ? $0 : nil }
        // Nothing to keep: no transaction (a write would wait for the lock for nothing).
        guard nonce != nil || keptProfile != nil else { return }
        try await engine.write { connection in
            if let nonce, let conflict = SignInConflict(try ReplayGuard.consumeNonce(nonce, now: now, in: connection)) {
                throw conflict
            }
            if let keptProfile {
                try PendingProfileStore.hold(appleSub: appleSub, profile: keptProfile, now: now, in: connection)
            }
        }
    }
}
