import Logging
import Store

/// Deletes what has expired, once a minute: sessions past their absolute or idle expiry,
/// replay marks and nonces, pending profiles past their 24 hours, web sign-ins whose ten
/// minutes are over, console sessions past their twelve hours, access-token signing keys a day
/// after they were retired, and audit events past `audit_retention`. Nothing here changes an
/// answer (every read already ignores expired rows); it keeps the tables from growing.
package struct Housekeeping: Sendable {
    package let store: Store
    package let idleTTL: Int64
    package let logger: Logger
    package let clock: @Sendable () -> Int64
    /// `audit_retention` in seconds: older events are pruned.
    package var auditRetention: Int64 = 180 * 86_400

    package static let period: Duration = .seconds(60)
    /// Audit events deleted per transaction, and transactions per pass: a backlog (a lowered
    /// `audit_retention`) drains over several passes without holding the write lock long.
    package static let auditBatch = 1_000
    package static let auditBatchesPerPass = 20

    package func run() async {
        while !Task.isCancelled {
            await runOnce()
            try? await Task.sleep(for: Self.period)
        }
    }

    /// One pass; returns how many rows went (0 when another instance is doing it).
    @discardableResult
    package func runOnce() async -> Int {
        // After the prune, so the entries of the sessions it deleted go in the same pass.
        defer { store.sessions.sweepCache() }
        do {
            guard var deleted = try await store.pruneExpired(now: clock(), idleTTL: idleTTL) else { return 0 }
            deleted += try await pruneAudit()
            // SQLite keeps the pages of deleted rows otherwise.
            try await store.reclaimFreePages()
            return deleted
        } catch {
            logger.warning("housekeeping could not delete expired rows", metadata: ["error": "\(error)"])
            return 0
        }
    }

    /// Events older than `auditRetention`, in bounded batches; returns how many went.
    package func pruneAudit() async throws -> Int {
        let before = clock() - auditRetention
        var deleted = 0
        for _ in 0..<Self.auditBatchesPerPass {
            let batch = try await store.audit.prune(before: before, limit: Self.auditBatch)
            deleted += batch
            if batch < Self.auditBatch { break }
        }
        return deleted
    }

    package init(store: Store, idleTTL: Int64, logger: Logger, clock: @escaping @Sendable () -> Int64, auditRetention: Int64 = 180 * 86_400) {
        self.store = store
        self.idleTTL = idleTTL
        self.logger = logger
        self.clock = clock
        self.auditRetention = auditRetention
    }
}
