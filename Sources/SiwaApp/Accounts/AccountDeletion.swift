import AppleClient
import Glibc
import Logging
import Store
import WireFormat

/// An account's deletion (`DELETE /api/account`, docs/reference/http-api.md): at once every session ends and the user can no longer
/// be read; the user's Apple token goes into the durable revocation queue in the same
/// transaction; one attempt is made within the request, bounded to 2 s, and the queue's worker
/// retries anything left until Apple accepts it.
struct AccountDeletion: Sendable {
    let store: Store
    let revoker: Revoker
    let clock: @Sendable () -> Int64

    /// How long the request waits for Apple before answering `pending`.
    static let inRequestBound: Duration = .seconds(2)

    /// Deletes the user for `reason` and makes the first revocation attempt; the outcome at
    /// Apple (`done`, `pending`, or `none` when no Apple token was stored), or nil when there is
    /// no such user.
    func delete(userID: String, reason: DeletionReason = .accountDeleted) async throws -> String? {
        let now = clock()
        // First due after the in-request attempt, so the worker does not race it.
        guard let deletion = try await store.deleteUser(userID: userID, reason: reason, now: now, firstAttemptAt: now + 3) else {
            return nil
        }
        guard let queued = deletion.revocation else { return "none" }
        let revoker = self.revoker
        let accepted = await withTaskGroup(of: Bool.self) { group -> Bool in
            group.addTask { await revoker.attempt(queued) }
            group.addTask {
                try? await Task.sleep(for: Self.inRequestBound)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        return accepted ? "done" : "pending"
    }
}

/// Makes revocation attempts and keeps the queue's books: success removes the row, failure
/// (any failure, 4xx included) schedules the next try with doubling back-off and jitter.
struct Revoker: Sendable {
    let api: AppleAPI?
    let store: Store
    let backoff: Int64
    let backoffMax: Int64
    let metrics: Metrics
    let logger: Logger
    let clock: @Sendable () -> Int64
    /// Tokens to revoke that the queue could not take yet (`revokeUnowned`).
    let held = HeldRevocations()

    var queue: RevocationQueue { store.revocations }

    /// One attempt; true when Apple accepted the revocation (and the row is gone).
    func attempt(_ revocation: PendingRevocation) async -> Bool {
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
    static let lease: Int64 = 120

    /// Works the queue until cancelled: every second, the held revocations go into it, and the
    /// rows that are due are claimed so that several instances never send the same revocation
    /// at once.
    func run() async {
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
}
