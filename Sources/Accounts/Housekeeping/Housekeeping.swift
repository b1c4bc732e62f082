import Logging
import Store

/// Deletes what has expired, once a minute: sessions past their absolute or idle expiry,
/// replay marks and nonces, pending profiles past their 24 hours, web sign-ins whose ten
/// minutes are over, and access-token signing keys a day after they were retired. Nothing here
/// changes an answer (every read already ignores expired rows); it keeps the tables from growing.
package struct Housekeeping: Sendable {
    package let store: Store
    package let idleTTL: Int64
    package let logger: Logger
    package let clock: @Sendable () -> Int64

    package static let period: Duration = .seconds(60)

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
            guard let deleted = try await store.pruneExpired(now: clock(), idleTTL: idleTTL) else { return 0 }
            // SQLite keeps the pages of deleted rows otherwise.
            try await store.reclaimFreePages()
            return deleted
        } catch {
            logger.warning("housekeeping could not delete expired rows", metadata: ["error": "\(error)"])
            return 0
        }
    }

    package init(store: Store, idleTTL: Int64, logger: Logger, clock: @escaping @Sendable () -> Int64) {
        self.store = store
        self.idleTTL = idleTTL
        self.logger = logger
        self.clock = clock
    }
}
