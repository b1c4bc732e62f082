import AppleClient
import HTTPServer
import JOSE
import JSON
import Logging
import OpenSSLCrypto
import Store
import WireFormat

/// A sign-in with Apple, whichever way it arrives (SPEC §4): the JSON of `POST /api/auth/apple`
/// (native apps, Sign in with Apple JS popup mode) or the web flow's `form_post` callback. An
/// identity token (and optionally its authorization code) becomes a user and a session. Every
/// check runs before anything is sent to Apple; the code goes to Apple at most once; the user
/// and the session are created in one transaction.
struct SignIn: Sendable {
    struct Input: Sendable {
        var identityToken: String
        var authorizationCode: String?
        /// The raw nonce the token must carry (raw, or as its SHA-256 in hex or base64url).
        var nonce: String?
        var profile: ClientProfile?
        var deviceName: String?
    }

    struct Success: Sendable {
        let user: UserRecord
        let session: NewSession
        let created: Bool
    }

    enum Failure: Error {
        case invalidRequest(String)
        case invalidToken(TokenFailure)
        case invalidGrant
        case appleUnavailable(String)
        case keysUnavailable
        case internalError

        var outcome: String {
            switch self {
            case .invalidRequest: "invalid_request"
            case .invalidToken: "invalid_token"
            case .invalidGrant: "invalid_grant"
            case .appleUnavailable: "apple_unavailable"
            case .keysUnavailable: "keys_unavailable"
            case .internalError: "error"
            }
        }
    }

    let configuration: Configuration
    let store: Store
    let keys: KeySetCache
    let api: AppleAPI?
    let metrics: Metrics
    let logger: Logger
    let clock: @Sendable () -> Int64

    /// Signs in and counts the outcome (`siwa_sign_ins_total`, and the refusal reason).
    func run(_ input: Input, requestID: String) async throws(Failure) -> Success {
        let store = self.store
        return try await counted { () async throws(Failure) -> Success in
            let signedIn = try await signIn(input, requestID: requestID) { write, now in try await store.completeSignIn(write, now: now) }
            return Success(user: signedIn.user, session: signedIn.session, created: signedIn.created)
        }
    }

    /// A web sign-in that returns to an app (SPEC §8): the same checks and writes, but instead
    /// of a session the one-time code of `grant`, which the app exchanges with its verifier.
    func runReturningToApp(_ input: Input, grant: AppReturnGrant, requestID: String) async throws(Failure) -> (user: UserRecord, created: Bool) {
        let store = self.store
        return try await counted { () async throws(Failure) -> (user: UserRecord, created: Bool) in
            try await signIn(input, requestID: requestID) { write, now in
                try await store.completeSignIn(write, returningToApp: grant, now: now)
            }
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

    /// Every check, then Apple, then `commit` with the write (the Store's one transaction).
    private func signIn<T>(
        _ input: Input, requestID: String, commit: (SignInWrite, Int64) async throws -> T
    ) async throws(Failure) -> T {
        let now = clock()
        let verified = try await verify(input, now: now)
        let claims = verified.claims
        let tokenHash = SHA256.hash(input.identityToken)
        let audience = claims.audiences.first { configuration.clientIDs.contains($0) } ?? claims.audiences.first ?? ""
        let tokens: TokenResponse?
        do {
            if try await store.replay.isUsed(tokenHash) { throw Failure.invalidToken(.replayed) }
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
            throw Self.failure(conflict)
        } catch {
            logger.error("sign-in storage failed", metadata: ["error": "\(error)", "request_id": .string(requestID)])
            throw .internalError
        }
        let identity = VerifiedIdentity(
            appleSub: claims.subject, email: claims.email, emailVerified: claims.emailVerified, isPrivateEmail: claims.isPrivateEmail,
            realUserStatus: verified.payload["real_user_status"] == nil ? nil : UserRecord.RealUserStatus(rawValue: claims.realUserStatus.rawValue),
            transferSub: claims.transferSubject.flatMap { $0.isEmpty ? nil : $0 })
        // `exp` is within `AppleClaims.latestTime` once verified, so adding the leeway below
        // cannot overflow; the clamp keeps that true should the bound ever move.
        let tokenExpiry = min(claims.expiresAt ?? now + 86_400, AppleClaims.latestTime)
        var write = SignInWrite(
            identity: identity, tokenHash: tokenHash, tokenExpiresAt: tokenExpiry + TokenVerifier.leeway,
            sessionTTL: Int64(configuration.sessionTTL.components.seconds))
        write.profile = input.profile
        write.deviceName = input.deviceName
        // Without a code nothing was committed yet: the nonce is used up with the session.
        write.nonce = input.authorizationCode == nil ? input.nonce : nil
        write.appleTokens = tokens.map { AppleTokenGrant(clientID: audience, refreshToken: $0.refreshToken, accessToken: $0.accessToken) }
        do {
            return try await commit(write, now)
        } catch let conflict as SignInConflict {
            throw Self.failure(conflict)
        } catch {
            logger.error("sign-in not stored", metadata: ["error": "\(error)", "request_id": .string(requestID)])
            throw .internalError
        }
    }

    /// A replayed token or nonce is `replayed`; an expired server nonce does not match.
    private static func failure(_ conflict: SignInConflict) -> Failure {
        switch conflict {
        case .tokenReplayed, .nonceReplayed: .invalidToken(.replayed)
        case .nonceExpired: .invalidToken(.nonceMismatch)
        }
    }

    private func verify(_ input: Input, now: Int64) async throws(Failure) -> TokenVerifier.Verified {
        guard keys.isLoaded else { throw .keysUnavailable }
        let policy = TokenVerifier.Policy(
            kind: .identityToken, audiences: Set(configuration.clientIDs),
            nonce: .check(expected: input.nonce, requireNonce: configuration.requireNonce), authorizationCode: input.authorizationCode)
        do {
            let verified = try await keys.verify(input.identityToken, policy: policy, now: now)
            if let form = verified.nonceForm {
                logger.debug("identity token verified", metadata: ["nonce_form": .string(form.rawValue)])
            }
            return verified
        } catch {
            // The forms tried, for people comparing a client's nonce handling (SPEC §4).
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
        let redirectURI = audience == configuration.webClientID ? configuration.redirectURI : nil
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
                await queueRevocation(of: tokens, clientID: audience, now: now, requestID: requestID)
                throw .invalidToken(.subjectMismatch)
            }
        }
        return tokens
    }

    /// The grant Apple just made belongs to nobody here: it goes to the revocation queue (SPEC
    /// §7), whose worker revokes it.
    private func queueRevocation(of tokens: TokenResponse, clientID: String, now: Int64, requestID: String) async {
        // The refresh token revokes the whole grant; an exchange always carries an access token.
        let (token, kind) = tokens.refreshToken.map { ($0, TokenKind.refresh) } ?? (tokens.accessToken, TokenKind.access)
        do {
            try await store.queueRevocation(clientID: clientID, token: token, kind: kind, now: now)
        } catch {
            logger.error("tokens of a refused sign-in could not be queued for revocation", metadata: [
                "error": "\(error)", "request_id": .string(requestID),
            ])
        }
    }
}
