import AppleClient
import Glibc
import Logging
import Store
import WireFormat

/// Makes revocation attempts and keeps the queue's books: success removes the row, failure
/// (any failure, 4xx included) schedules the next try with doubling back-off and jitter.
package struct Revoker: Sendable {
    package let api: AppleAPI?
    package let store: Store
    package let backoff: Int64
    package let backoffMax: Int64
    package let metrics: AccountMetrics
    package let logger: Logger
    package let clock: @Sendable () -> Int64
    /// Tokens to revoke that the queue could not take yet (`revokeUnowned`).
    package let held = HeldRevocations()

    package var queue: RevocationQueue { store.revocations }

    /// One attempt; true when Apple accepted the revocation (and the row is gone).
    package func attempt(_ revocation: PendingRevocation) async -> Bool {
        var failure = "team credentials not configured"
        if let api {
            do {
                try await api.revoke(revocation.token, kind: revocation.kind, clientID: revocation.clientID)
                do {
                    try await queue.complete(id: revocation.id)
                } catch {
                    // Revoked but still queued: the next attempt is a harmless repeat.
                    logger.warning("revocation done but not removed from the queue", metadata: ["error": "\(error)"])
                }
                return true
            } catch {
                failure = error.outcome
                if case .invalidClient = error {
                    logger.error("Apple refused our client authentication while revoking: check team_id, key_id and private_key")
                }
            }
        }
        let attempts = revocation.attempts + 1
        let delay = RetryBackoff.delay(attempt: attempts, base: backoff, max: backoffMax)
        try? await queue.retry(id: revocation.id, attempts: attempts, nextAttemptAt: clock() + delay, error: failure)
        return false
    }

    /// How long a claimed row is this worker's: longer than an attempt can take (the client's
    /// deadlines), so an instance that dies mid-attempt leaves the row to another after it.
    package static let lease: Int64 = 120

    /// Works the queue until cancelled: every second, the held revocations go into it, and the
    /// rows that are due are claimed so that several instances never send the same revocation
    /// at once.
    package func run() async {
        while !Task.isCancelled {
            await queueHeld()
            if let due = try? await queue.claimDue(now: clock(), lease: Self.lease) {
                for revocation in due where !Task.isCancelled {
                    _ = await attempt(revocation)
                }
            }
            if let (count, oldest) = try? await queue.depth() {
                metrics.revocations.update(depth: count, oldestAge: oldest.map { Swift.max(0, clock() - $0) } ?? 0)
            }
            metrics.revocations.workerPassed()
            try? await Task.sleep(for: .seconds(1))
        }
    }

    package init(api: AppleAPI?, store: Store, backoff: Int64, backoffMax: Int64, metrics: AccountMetrics, logger: Logger, clock: @escaping @Sendable () -> Int64) {
        self.api = api
        self.store = store
        self.backoff = backoff
        self.backoffMax = backoffMax
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }
}
