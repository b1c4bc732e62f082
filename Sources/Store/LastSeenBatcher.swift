import SQLRow
import Synchronization

/// Collects "session used at time t" in memory and writes them in one transaction at most
/// every `interval` seconds, so authenticated reads do not each cost a durable write.
///
/// Idle expiry is then late by at most `interval` (plus the time to the next request).
/// `interval(idleTTL:)` picks min(idleTTL/100, 60 s), the bound docs/reference/http-api.md allows.
public final class LastSeenBatcher: Sendable {
    private struct State {
        var pending: [String: Int64] = [:]
        /// The batch being written: still this instance's knowledge until it is committed.
        var inFlight: [String: Int64] = [:]
        /// The last batch committed, kept until the next one commits: a session cache that
        /// learns of the write later (PostgreSQL's, by notification) may still hold the row
        /// as it was, and must not find the session idle in between.
        var committed: [String: Int64] = [:]
        var lastFlushAt: Int64
        var flushing = false
        var flushes = 0
    }

    private let engine: any StoreEngine
    public let interval: Int64
    private let state: Mutex<State>

    /// - Parameter now: the current time, as the start of the first interval.
    init(engine: any StoreEngine, interval: Int64, now: Int64) {
        self.engine = engine
        self.interval = max(1, interval)
        self.state = Mutex(State(lastFlushAt: now))
    }

    /// The flush interval that keeps idle expiry within docs/reference/http-api.md's bound.
    public static func interval(idleTTL: Int64) -> Int64 {
        max(1, min(idleTTL / 100, 60))
    }

    /// Records that `sessionID` was used at `now`. Returns true when a flush is due (the
    /// caller then runs `flush`, typically off the request path).
    @discardableResult
    public func record(_ sessionID: String, at now: Int64) -> Bool {
        state.withLock { state in
            state.pending[sessionID] = max(state.pending[sessionID] ?? now, now)
            return !state.flushing && now - state.lastFlushAt >= interval
        }
    }

    /// Records the use and, when due, flushes in the same call.
    nonisolated(nonsending) public func touch(_ sessionID: String, at now: Int64) async throws {
        if record(sessionID, at: now) {
            try await flush(now: now)
        }
    }

    /// Writes every pending time in one transaction; returns how many sessions it covered.
    /// Concurrent calls do not double-write: one flush runs, the others return 0.
    @discardableResult
    public func flush(now: Int64) async throws -> Int {
        let batch: [String: Int64]? = state.withLock { state in
            guard !state.flushing else { return nil }
            state.lastFlushAt = max(state.lastFlushAt, now)
            guard !state.pending.isEmpty else { return nil }
            state.flushing = true
            state.inFlight = state.pending
            defer { state.pending = [:] }
            return state.pending
        }
        guard let batch else { return 0 }
        do {
            try await engine.write { try SessionStore.recordLastSeen(batch, in: $0) }
        } catch {
            // Put the times back so the next flush retries them.
            state.withLock { state in
                state.pending.merge(batch) { max($0, $1) }
                state.inFlight = [:]
                state.flushing = false
            }
            throw error
        }
        state.withLock {
            $0.committed = batch
            $0.inFlight = [:]
            $0.flushing = false
            $0.flushes += 1
        }
        return batch.count
    }

    /// The latest use of `sessionID` recorded here and not yet committed, or committed by the
    /// last flush, if any: what a cached `last_seen_at` may not know yet. A session whose stored
    /// time looks idle is still live if this says otherwise (on a quiet instance no later
    /// request may come to write the batch before the stored time runs out).
    public func lastUse(of sessionID: String) -> Int64? {
        state.withLock { [$0.pending[sessionID], $0.inFlight[sessionID], $0.committed[sessionID]].compactMap(\.self).max() }
    }

    /// Sessions waiting to be written.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Write transactions issued so far (for tests and metrics).
    public var flushCount: Int { state.withLock { $0.flushes } }
}
