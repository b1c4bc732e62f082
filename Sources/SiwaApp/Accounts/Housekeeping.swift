import Logging
import Store

/// Deletes what has expired, once a minute: sessions past their absolute or idle expiry,
/// replay marks and nonces, pending profiles past their 24 hours, and web sign-ins whose ten
/// minutes are over. Nothing here changes
/// an answer (every read already ignores expired rows); it keeps the tables from growing.
struct Housekeeping: Sendable {
    let sessions: SessionStore
    let replay: ReplayGuard
    let pendingProfiles: PendingProfileStore
    let webSignIns: WebSignInStore
    let idleTTL: Int64
    /// Returns the pages of deleted rows to the file system (SQLite keeps them otherwise).
    var reclaimFreePages: @Sendable () async throws -> Void = {}
    let logger: Logger
    let clock: @Sendable () -> Int64

    static let period: Duration = .seconds(60)

    func run() async {
        while !Task.isCancelled {
            await runOnce()
            try? await Task.sleep(for: Self.period)
        }
    }

    /// One pass; returns how many rows went.
    @discardableResult
    func runOnce() async -> Int {
        let now = clock()
        // After the prune, so the entries of the sessions it deleted go in the same pass.
        defer { sessions.sweepCache() }
        do {
            let deleted = try await sessions.pruneExpired(now: now, idleTTL: idleTTL)
                + replay.prune(now: now)
                + pendingProfiles.prune(now: now)
                + webSignIns.prune(now: now)
            try await reclaimFreePages()
            return deleted
        } catch {
            logger.warning("housekeeping could not delete expired rows", metadata: ["error": "\(error)"])
            return 0
        }
    }
}
