import AppleClient
import Logging
import Store

/// Re-validates stored refresh tokens with Apple (docs/reference/http-api.md "Refresh-token re-validation"):
/// each user with a live session is asked about once every `interval`, users spread over the
/// interval, never more than `maxPerSecond` calls a second, one call at a time (so never twice
/// for the same user at once). Apple refusing the token (`invalid_grant`, or `invalid_request`,
/// which it has answered for revoked users) has the effect of `consent-revoked`; anything
/// else proves nothing about the token and is tried again later.
package struct RefreshValidator: Sendable {
    package enum Outcome: String, Sendable {
        /// Apple accepted the refresh token.
        case valid
        /// Apple refused it: sessions ended, tokens dropped, credential revoked.
        case revoked
        /// No live session: not worth a call; looked at again an interval later.
        case idle
        /// Apple did not answer usefully (down, 5xx, throttled, our credentials refused).
        case retry
        /// The token was gone or replaced by a new sign-in before the answer mattered.
        case superseded
    }

    package let api: AppleAPI
    package let store: Store
    /// Seconds between re-validations of one user; 0 turns the validator off.
    package let interval: Int64
    package let idleTTL: Int64
    package let maxPerSecond: Int
    package let metrics: AccountMetrics
    package let logger: Logger
    package let clock: @Sendable () -> Int64
    /// The server's team (`team_id`): users still on their way to it in a team transfer hold
    /// the previous team's tokens, which are not asked about (see `claimDue`).
    package var receivingTeam: String? = nil

    /// Apple's guidance is "up to once a day" per user; this caps the whole server's rate.
    package static let defaultMaxPerSecond = 10

    /// How long claimed tokens are this validator's: a batch of `maxPerSecond` calls to Apple
    /// finishes well within it.
    package static let lease: Int64 = 300

    /// After a failure that says nothing about the token.
    package var retryDelay: Int64 { max(1, min(interval, 600)) }

    /// One batch a second until cancelled.
    package func run() async {
        guard interval > 0 else { return }
        while !Task.isCancelled {
            let started = ContinuousClock.now
            await runOnce()
            try? await Task.sleep(until: started + .seconds(1))
        }
    }

    /// Schedules newly stored tokens, then checks up to `maxPerSecond` due ones, one after the
    /// other. Returns each checked user's outcome.
    @discardableResult
    package func runOnce() async -> [String: Outcome] {
        let now = clock()
        let due: [RefreshValidationSchedule.Due]
        do {
            try await store.refreshSchedule.scheduleNew(interval: interval)
            // Claimed with a lease: of several instances, one asks Apple about each token.
            due = try await store.refreshSchedule.claimDue(
                now: now, idleTTL: idleTTL, limit: maxPerSecond, lease: Self.lease, receivingTeam: receivingTeam)
        } catch {
            logger.warning("refresh validation could not read its schedule", metadata: ["error": "\(error)"])
            return [:]
        }
        var outcomes: [String: Outcome] = [:]
        let idle = due.filter { !$0.hasLiveSession }.map(\.userID)
        if !idle.isEmpty {
            try? await store.refreshSchedule.postpone(userIDs: idle, until: now + interval)
            for userID in idle { outcomes[userID] = .idle }
        }
        for entry in due where entry.hasLiveSession && !Task.isCancelled {
            let outcome = await validate(userID: entry.userID)
            outcomes[entry.userID] = outcome
            metrics.refreshValidations.increment(outcome.rawValue)
        }
        return outcomes
    }

    package func validate(userID: String) async -> Outcome {
        let tokens: AppleTokens
        do {
            guard let loaded = try await store.vault.load(userID: userID), loaded.refreshToken != nil else { return .superseded }
            tokens = loaded
        } catch {
            // Sealed under another data_key: nothing to send. Looked at again an interval later.
            logger.warning("a stored refresh token does not open; is data_key the one it was sealed with?", metadata: ["user_id": .string(userID)])
            try? await store.refreshSchedule.postpone(userIDs: [userID], until: clock() + interval)
            return .retry
        }
        do {
            _ = try await api.validateRefreshToken(tokens.refreshToken ?? "", clientID: tokens.clientID)
            let now = clock()
            try? await store.refreshSchedule.recordValidated(userID: userID, now: now, nextDueAt: now + interval - Int64.random(in: 0...(interval / 10)))
            return .valid
        } catch {
            switch error {
            case .invalidGrant, .invalidRequest:
                return await revoke(userID: userID, storedAt: tokens.updatedAt, reason: error.outcome)
            case .invalidClient:
                logger.error("Apple refused our client authentication while re-validating a refresh token: check team_id, key_id and private_key")
            case .rejected, .unavailable:
                logger.info("refresh token re-validation postponed", metadata: ["user_id": .string(userID), "outcome": .string(error.outcome)])
            }
            try? await store.refreshSchedule.postpone(userIDs: [userID], until: clock() + retryDelay)
            return .retry
        }
    }

    /// The effect of `consent-revoked`, unless a sign-in stored a new grant meanwhile.
    private func revoke(userID: String, storedAt: Int64, reason: String) async -> Outcome {
        let now = clock()
        do {
            let revoked = try await store.markRevokedIfTokensUnchanged(userID: userID, storedAt: storedAt, now: now)
            guard revoked else { return .superseded }
            logger.info("Apple refused a stored refresh token; the user's sessions ended", metadata: [
                "user_id": .string(userID), "apple_error": .string(reason),
            ])
            return .revoked
        } catch {
            logger.error("could not end the sessions of a user whose refresh token Apple refused", metadata: [
                "user_id": .string(userID), "error": "\(error)",
            ])
            try? await store.refreshSchedule.postpone(userIDs: [userID], until: now + retryDelay)
            return .retry
        }
    }

    package init(api: AppleAPI, store: Store, interval: Int64, idleTTL: Int64, maxPerSecond: Int, metrics: AccountMetrics, logger: Logger, clock: @escaping @Sendable () -> Int64, receivingTeam: String? = nil) {
        self.api = api
        self.store = store
        self.interval = interval
        self.idleTTL = idleTTL
        self.maxPerSecond = maxPerSecond
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.receivingTeam = receivingTeam
    }
}
