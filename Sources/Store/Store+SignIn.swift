import SQLite

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
    public var sessionTTL: Int64

    public init(identity: VerifiedIdentity, tokenHash: [UInt8], tokenExpiresAt: Int64, sessionTTL: Int64) {
        self.identity = identity
        self.tokenHash = tokenHash
        self.tokenExpiresAt = tokenExpiresAt
        self.sessionTTL = sessionTTL
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
    }

    /// Commits a verified sign-in. Throws `SignInConflict` (and keeps nothing) for a replayed
    /// token or a used or expired nonce.
    public func completeSignIn(_ write: SignInWrite, now: Int64) async throws -> SignedIn {
        let vault = self.vault
        let outbox = self.outbox
        do {
            return try await engine.write { connection in
                if let nonce = write.nonce, let conflict = SignInConflict(try ReplayGuard.consumeNonce(nonce, now: now, in: connection)) {
                    throw conflict
                }
                try ReplayGuard.recordUsedToken(write.tokenHash, expiresAt: write.tokenExpiresAt, in: connection)
                let adopted = try PendingProfileStore.adopt(appleSub: write.identity.appleSub, now: now, in: connection)
                let before = outbox.renderer == nil ? nil : try UserStore.user(appleSub: write.identity.appleSub, in: connection)
                let (user, created) = try UserStore.upsertOnSignIn(
                    in: connection, identity: write.identity, profile: write.profile ?? adopted?.profile, now: now)
                if created {
                    try outbox.append(.userCreated, .user(user), now: now, in: connection)
                } else {
                    try outbox.appendIfChanged(from: before, to: user, now: now, in: connection)
                }
                if let grant = write.appleTokens {
                    try vault.store(
                        in: connection, userID: user.id, clientID: grant.clientID, refreshToken: grant.refreshToken,
                        accessToken: grant.accessToken, now: now)
                }
                let session = try SessionStore.create(in: connection, userID: user.id, deviceName: write.deviceName, now: now, ttl: write.sessionTTL)
                return SignedIn(user: user, session: session, created: created)
            }
        } catch ReplayError.tokenAlreadyUsed {
            throw SignInConflict.tokenReplayed
        }
    }

    /// Before a code goes to Apple, in one commit: the server-issued nonce is used up (so the
    /// code is sent at most once per nonce), and the name and email Apple sends only once are
    /// kept for the next sign-in of `appleSub` should this one fail.
    public func prepareCodeExchange(nonce: String?, appleSub: String, profile: ClientProfile?, now: Int64) async throws {
        try await engine.write { connection in
            if let nonce, let conflict = SignInConflict(try ReplayGuard.consumeNonce(nonce, now: now, in: connection)) {
                throw conflict
            }
            if let profile, profile.givenName != nil || profile.familyName != nil || profile.email != nil {
                try PendingProfileStore.hold(appleSub: appleSub, profile: profile, now: now, in: connection)
            }
        }
    }
}
