import Logging
import Store

/// Deletes what has expired, once a minute: sessions past their absolute or idle expiry,
/// replay marks and nonces, pending profiles past their 24 hours, web sign-ins whose ten
/// minutes are over, console sessions past their twelve hours, and access-token signing keys
/// a day after they were retired. Nothing here
/// changes an answer (every read already ignores expired rows); it keeps the tables from growing.
struct Housekeeping: Sendable {
    let store: Store
    let idleTTL: Int64
    let logger: Logger
    let clock: @Sendable () -> Int64
    /// `audit_retention` in seconds: older events are pruned.
    var auditRetention: Int64 = 180 * 86_400

    static let period: Duration = .seconds(60)
    /// Audit events deleted per transaction, and transactions per pass: a backlog (a lowered
    /// `audit_retention`) drains over several passes without holding the write lock long.
    static let auditBatch = 1_000
    static let auditBatchesPerPass = 20

    func run() async {
        while !Task.isCancelled {
            await runOnce()
            try? await Task.sleep(for: Self.period)
        }
    }

    /// One pass; returns how many rows went (0 when another instance is doing it).
    @discardableResult
    func runOnce() async -> Int {
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
    func pruneAudit() async throws -> Int {
        let before = clock() - auditRetention
        var deleted = 0
        for _ in 0..<Self.auditBatchesPerPass {
            let batch = try await store.audit.prune(before: before, limit: Self.auditBatch)
            deleted += batch
            if batch < Self.auditBatch { break }
        }
        return deleted
    }
}
