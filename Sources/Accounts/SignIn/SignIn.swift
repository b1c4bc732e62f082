import AppleClient
import JOSE
import JSON
import Logging
import OpenSSLCrypto
import Store
import WireFormat

/// A sign-in with Apple, whichever way it arrives (docs/reference/http-api.md): the JSON of `POST /api/auth/apple`
/// (native apps, Sign in with Apple JS popup mode) or the web flow's `form_post` callback. An
/// identity token (and optionally its authorization code) becomes a user and a session. Every
/// check runs before anything is sent to Apple; the code goes to Apple at most once; the user
/// and the session are created in one transaction.
package struct SignIn: Sendable {
    package struct Input: Sendable {
        package var identityToken: String
        package var authorizationCode: String?
        /// The raw nonce the token must carry (raw, or as its SHA-256 in hex or base64url).
        package var nonce: String?
        package var profile: ClientProfile?
        package var deviceName: String?
        /// A new user's language (`RequestLocale`).
        package var locale = "en"
        /// How the sign-in arrived (`sign_in.succeeded`'s `method`).
        package var method = SignInMethod.apple
        /// Who signs in and from where (the audit trail).
        package var audit = AuditContext(actor: .user)

        package init(identityToken: String, authorizationCode: String? = nil, nonce: String? = nil) {
            self.identityToken = identityToken
            self.authorizationCode = authorizationCode
            self.nonce = nonce
        }
    }

    /// What a sign-in needs of the configuration.
    package struct Settings: Sendable {
        /// `client_ids`: the audiences an identity token may name.
        package var clientIDs: [String]
        package var requireNonce: Bool
        /// `web_client_id` and `redirect_uri`: a code issued to the web flow is exchanged with them.
        package var webClientID: String?
        package var redirectURI: String
        package var sessionTTL: Int64

        package init(clientIDs: [String], requireNonce: Bool, webClientID: String?, redirectURI: String, sessionTTL: Int64) {
            self.clientIDs = clientIDs
            self.requireNonce = requireNonce
            self.webClientID = webClientID
            self.redirectURI = redirectURI
            self.sessionTTL = sessionTTL
        }
    }

    package struct Success: Sendable {
        package let user: UserRecord
        package let session: NewSession
        package let created: Bool
    }

    package enum Failure: Error {
        case invalidRequest(String)
        case invalidToken(TokenFailure)
        case invalidGrant
        case appleUnavailable(String)
        case keysUnavailable
        /// docs/guides/passwords-and-email.md "No silent merges": the token's verified email is a password account's.
        case accountExists
        /// Binding the Apple ID to a user was refused (docs/guides/passwords-and-email.md: the upgrade, linking).
        case binding(PasswordAccountConflict)
        /// The database's error as it was met (reading or storing the sign-in): `ErrorResponses`
        /// answers by it, 503 `database_unavailable` when the database could not be reached.
        case storage(any Error)

        package var outcome: String {
            switch self {
            case .invalidRequest: "invalid_request"
            case .invalidToken: "invalid_token"
            case .invalidGrant: "invalid_grant"
            case .appleUnavailable: "apple_unavailable"
            case .keysUnavailable: "keys_unavailable"
            case .accountExists: "account_exists"
            case .binding(let conflict): conflict == .appleIDInUse ? "apple_id_in_use" : "conflict"
            case .storage(let cause): (cause as? StoreError)?.isUnavailable == true ? "database_unavailable" : "error"
            }
        }
    }

    package let settings: Settings
    package let store: Store
    package let keys: KeySetCache
    package let api: AppleAPI?
    /// Where Apple's tokens go when the sign-in that got them fails.
    package let revoker: Revoker
    package let metrics: AccountMetrics
    package let logger: Logger
    package let clock: @Sendable () -> Int64

    /// Signs in and counts the outcome (`siwa_sign_ins_total`, and the refusal reason).
    package func run(_ input: Input, requestID: String) async throws(Failure) -> Success {
        let store = self.store
        return try await counted { () async throws(Failure) -> Success in
            let signedIn = try await signIn(input, requestID: requestID, check: refusingMerges, checkApplies: Store.mayRefuseAsExistingAccount) { write, now in
                try await store.completeSignIn(write, now: now)
            }
            return Success(user: signedIn.user, session: signedIn.session, created: signedIn.created)
        }
    }

    /// A web sign-in that returns to an app (docs/guides/connecting-your-backend.md): the same checks and writes, but instead
    /// of a session the one-time code of `grant`, which the app exchanges with its verifier.
    package func runReturningToApp(_ input: Input, grant: AppReturnGrant, requestID: String) async throws(Failure) -> (user: UserRecord, created: Bool) {
        let store = self.store
        return try await counted { () async throws(Failure) -> (user: UserRecord, created: Bool) in
            try await signIn(input, requestID: requestID, check: refusingMerges, checkApplies: Store.mayRefuseAsExistingAccount) { write, now in
                try await store.completeSignIn(write, returningToApp: grant, now: now)
            }
        }
    }

    /// docs/guides/passwords-and-email.md: binds the token's Apple ID to `userID` instead of signing in as it: the upgrade
    /// (`removingPassword` is the hash just checked; a session is made, and counted as a
    /// sign-in) or linking (no session). The token is checked exactly as a sign-in's, and an
    /// Apple ID already another user's is refused before its code goes to Apple.
    package func bind(
        _ input: Input, userID: String, removingPassword: String?, makesSession: Bool, sessionID: String? = nil, requestID: String
    ) async throws(Failure) -> (user: UserRecord, session: NewSession?) {
        let store = self.store
        let body = { () async throws(Failure) -> (user: UserRecord, session: NewSession?) in
            try await signIn(input, requestID: requestID, check: { identity, _ in
                try await Self.checkBindable(identity, to: userID, linking: removingPassword == nil, store: store)
            }) { write, now in
                let binding = AppleBinding(
                    userID: userID, write: write, removingPassword: removingPassword, makesSession: makesSession, sessionID: sessionID)
                return try await store.bindAppleID(binding, now: now)
            }
        }
        if makesSession { return try await counted(body) }
        do throws(Failure) {
            return try await body()
        } catch {
            if case .invalidToken(let reason) = error { metrics.apple.verificationFailed(reason: reason.rawValue) }
            throw error
        }
    }

    private static func checkBindable(_ identity: VerifiedIdentity, to userID: String, linking: Bool, store: Store) async throws {
        if let holder = try await store.users.user(appleSub: identity.appleSub), holder.id != userID {
            throw PasswordAccountConflict.appleIDInUse
        }
        guard let user = try await store.users.user(id: userID) else { throw PasswordAccountConflict.userGone }
        if let current = user.appleSub, current != identity.appleSub { throw PasswordAccountConflict.otherAppleID }
        // docs/guides/passwords-and-email.md: refused before the code goes to Apple; the commit checks again.
        if linking, let credential = try await store.passwordCredential(userID: userID), !credential.emailVerified {
            throw PasswordAccountConflict.emailUnverified
        }
    }

    /// A sign-in's check before its code goes to Apple (docs/guides/passwords-and-email.md "No silent merges").
    private var refusingMerges: @Sendable (VerifiedIdentity, Int64) async throws -> Void {
        let store = self.store
        return { identity, _ in
            if try await store.refusesAsExistingAccount(identity) { throw SignInConflict.accountExists }
        }
    }

    private func counted<T>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        do throws(Failure) {
            let result = try await body()
            metrics.signIns.increment("success")
            return result
        } catch {
            metrics.signIns.increment(error.outcome)
            if case .invalidToken(let reason) = error { metrics.apple.verificationFailed(reason: reason.rawValue) }
            throw error
        }
    }

    /// Every check, then `check` (refusals that need the database, before anything is sent to
    /// Apple) where `checkApplies` says it can refuse the identity, then Apple, then `commit`
    /// with the write (the Store's one transaction).
    private func signIn<T>(
        _ input: Input, requestID: String, check: @Sendable (VerifiedIdentity, Int64) async throws -> Void,
        checkApplies: (VerifiedIdentity) -> Bool = { _ in true }, commit: (SignInWrite, Int64) async throws -> T
    ) async throws(Failure) -> T {
        let now = clock()
        let verified = try await verify(input, now: now)
        let claims = verified.claims
        let tokenHash = SHA256.hash(input.identityToken)
        let audience = claims.audiences.first { settings.clientIDs.contains($0) } ?? claims.audiences.first ?? ""
        let identity = VerifiedIdentity(
            appleSub: claims.subject, email: claims.email, emailVerified: claims.emailVerified, isPrivateEmail: claims.isPrivateEmail,
            realUserStatus: verified.payload["real_user_status"] == nil ? nil : UserRecord.RealUserStatus(rawValue: claims.realUserStatus.rawValue),
            transferSub: claims.transferSubject.flatMap { $0.isEmpty ? nil : $0 })
        let tokens: TokenResponse?
        do {
            // The reads before the commit are for refusing before Apple is asked, or before
            // `check` refuses otherwise. Without a code and a check that applies, the commit
            // alone refuses a used token, first and with the same answer, and the sign-in
            // spares a database call (on PostgreSQL a round trip and a connection of the pool).
            let checking = checkApplies(identity)
            if input.authorizationCode != nil || checking, try await store.replay.isUsed(tokenHash) { throw Failure.invalidToken(.replayed) }
            if checking { try await check(identity, now) }
            if let code = input.authorizationCode {
                // The nonce is used up, and the name and email Apple sends once are kept,
                // before Apple is asked anything (a code is single use).
                try await store.prepareCodeExchange(nonce: input.nonce, appleSub: claims.subject, profile: input.profile, now: now)
                tokens = try await exchange(code, audience: audience, subject: claims.subject, now: now, requestID: requestID)
            } else {
                tokens = nil
            }
        } catch let failure as Failure {
            throw failure
        } catch let conflict as SignInConflict {
            throw await refused(conflict, input: input, identity: identity, now: now, requestID: requestID)
        } catch let conflict as PasswordAccountConflict {
            throw .binding(conflict)
        } catch {
            throw .storage(error)
        }
        // `exp` is within `AppleClaims.latestTime` once verified, so adding the leeway below
        // cannot overflow; the clamp keeps that true should the bound ever move.
        let tokenExpiry = min(claims.expiresAt ?? now + 86_400, AppleClaims.latestTime)
        var write = SignInWrite(
            identity: identity, tokenHash: tokenHash, tokenExpiresAt: tokenExpiry + TokenVerifier.leeway,
            sessionTTL: settings.sessionTTL)
        write.profile = input.profile
        write.deviceName = input.deviceName
        write.locale = input.locale
        // Without a code nothing was committed yet: the nonce is used up with the session.
        write.nonce = input.authorizationCode == nil ? input.nonce : nil
        write.appleTokens = tokens.map { AppleTokenGrant(clientID: audience, refreshToken: $0.refreshToken, accessToken: $0.accessToken) }
        write.method = input.method
        write.audit = input.audit
        do {
            return try await commit(write, now)
        } catch {
            switch error {
            case let conflict as SignInConflict:
                // Refused after Apple issued tokens because another instance made the password
                // account meanwhile: they belong to nobody here. Not for a replay or a binding
                // refused: the Apple ID may be another user's here, and revoking the fresh grant
                // would end that user's authorization at Apple.
                if conflict == .accountExists, let tokens { await revokeUnowned(tokens, clientID: audience, now: now, requestID: requestID) }
                throw await refused(conflict, input: input, identity: identity, now: now, requestID: requestID)
            case let conflict as PasswordAccountConflict:
                throw .binding(conflict)
            default:
                // Not stored (the database went away) after Apple issued tokens (docs/reference/http-api.md).
                if let tokens { await revokeUnowned(tokens, clientID: audience, now: now, requestID: requestID) }
                throw .storage(error)
            }
        }
    }

    /// A replayed token or nonce is `replayed`; an expired server nonce does not match. An
    /// existing password account keeps the name and email Apple sent (once) as a pending
    /// profile, as a failed sign-in does, for the upgrade or link that follows.
    private func refused(_ conflict: SignInConflict, input: Input, identity: VerifiedIdentity, now: Int64, requestID: String) async -> Failure {
        let subject = identity.appleSub
        switch conflict {
        case .tokenReplayed, .nonceReplayed: return .invalidToken(.replayed)
        case .nonceExpired: return .invalidToken(.nonceMismatch)
        case .accountExists:
            if let profile = input.profile {
                do {
                    try await store.pendingProfiles.hold(appleSub: subject, profile: profile, now: now)
                } catch {
                    logger.error("the profile of a refused sign-in could not be held", metadata: [
                        "error": "\(error)", "request_id": .string(requestID),
                    ])
                }
            }
            logger.info("Apple sign-in refused: its email is a password account's", metadata: ["request_id": .string(requestID)])
            // `sign_in.failed` on the timeline of the account the refusal protects.
            do {
                if let owner = try await store.passwordOwner(of: identity) {
                    try await store.recordSignInFailure(userID: owner, method: input.method, reason: "account_exists", now: now, audit: input.audit)
                }
            } catch {
                logger.error("a refused sign-in could not be recorded", metadata: ["error": "\(error)", "request_id": .string(requestID)])
            }
            return .accountExists
        }
    }

    private func verify(_ input: Input, now: Int64) async throws(Failure) -> TokenVerifier.Verified {
        guard keys.isLoaded else { throw .keysUnavailable }
        let policy = TokenVerifier.Policy(
            kind: .identityToken, audiences: Set(settings.clientIDs),
            nonce: .check(expected: input.nonce, requireNonce: settings.requireNonce), authorizationCode: input.authorizationCode)
        do {
            let verified = try await keys.verify(input.identityToken, policy: policy, now: now)
            if let form = verified.nonceForm {
                logger.debug("identity token verified", metadata: ["nonce_form": .string(form.rawValue)])
            }
            return verified
        } catch {
            // The forms tried, for people comparing a client's nonce handling (docs/reference/http-api.md).
            logger.info("identity token refused", metadata: [
                "reason": .string(error.rawValue), "nonce_forms_tried": "raw, sha256_hex, sha256_base64url",
            ])
            throw .invalidToken(error)
        }
    }

    /// Sends the code to Apple once, whatever happens after (a code is single use).
    private func exchange(_ code: String, audience: String, subject: String, now: Int64, requestID: String) async throws(Failure) -> TokenResponse {
        guard let api else {
            logger.error("authorization_code given but team_id, key_id or private_key is not configured", metadata: ["request_id": .string(requestID)])
            throw .appleUnavailable("not configured")
        }
        let redirectURI = audience == settings.webClientID ? settings.redirectURI : nil
        let tokens: TokenResponse
        do {
            tokens = try await api.exchangeCode(code, clientID: audience, redirectURI: redirectURI)
        } catch {
            switch error {
            case .invalidGrant: throw .invalidGrant
            case .invalidClient:
                logger.error("Apple refused our client authentication: check team_id, key_id, private_key and client_ids", metadata: ["request_id": .string(requestID)])
                throw .appleUnavailable("invalid_client")
            default:
                throw .appleUnavailable(error.outcome)
            }
        }
        if let idToken = tokens.idToken {
            let keys = self.keys
            let policy = TokenVerifier.Policy(kind: .exchangedToken, audiences: [audience])
            guard let exchanged = try? TokenVerifier.verify(idToken, keys: { keys.key($0) }, policy: policy, now: now),
                  exchanged.claims.subject == subject
            else {
                logger.warning("exchanged id_token does not name the same subject", metadata: ["request_id": .string(requestID)])
                await revokeUnowned(tokens, clientID: audience, now: now, requestID: requestID)
                throw .invalidToken(.subjectMismatch)
            }
        }
        return tokens
    }

    /// The grant Apple just made belongs to nobody here: it goes to the revocation queue
    /// (docs/reference/http-api.md), whose worker revokes it, or straight to Apple when the queue is unavailable too.
    private func revokeUnowned(_ tokens: TokenResponse, clientID: String, now: Int64, requestID: String) async {
        // The refresh token revokes the whole grant; an exchange always carries an access token.
        let (token, kind) = tokens.refreshToken.map { ($0, TokenKind.refresh) } ?? (tokens.accessToken, TokenKind.access)
        await revoker.revokeUnowned(token, kind: kind, clientID: clientID, now: now, requestID: requestID)
    }

    package init(settings: Settings, store: Store, keys: KeySetCache, api: AppleAPI?, revoker: Revoker, metrics: AccountMetrics, logger: Logger, clock: @escaping @Sendable () -> Int64) {
        self.settings = settings
        self.store = store
        self.keys = keys
        self.api = api
        self.revoker = revoker
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }
}
