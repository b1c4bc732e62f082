import Glibc
import OpenSSLCrypto
import PostgreSQL
import SQLite

/// Delivery's side of the webhook outbox (SPEC §8): events wait here, appended by the changes
/// they report, until the receiver accepts them or `webhook_retention` has passed.
///
/// Order per user: only a user's oldest event that has not failed can be claimed, so the next
/// one waits until the previous is delivered (its row deleted) or failed; other users' events do
/// not wait. A delivered event's row is deleted at once: nothing reads it afterwards, its body
/// holds the user's email, and a small table keeps claims cheap (the receiver drops repeats by
/// `webhook-id`; the log records the delivery).
public struct WebhookQueue: Sendable {
    /// What a failed attempt led to.
    public enum FailureOutcome: Sendable, Equatable {
        /// Tried again at this time.
        case retrying(at: Int64)
        /// Older than `webhook_retention`: no more attempts; the user's later events go on.
        case failed
    }

    private let engine: any StoreEngine
    /// Opens sealed bodies (`WebhookBodySeal`); nil for the operators' commands, which read none.
    private let cipher: AESGCM?

    init(engine: any StoreEngine, cipher: AESGCM?) {
        self.engine = engine
        self.cipher = cipher
    }

    /// Whether a claim at `now` would take an event: one due that is its user's oldest not
    /// failed. A read, so an idle worker polls without writing, and a user's events waiting
    /// behind one in back-off cost nothing meanwhile.
    public func hasDue(now: Int64) async throws -> Bool {
        try await engine.read {
            try $0.queryOne("SELECT 1 FROM webhook_events e WHERE \(Self.claimable) LIMIT 1", [.integer(now)]) != nil
        }
    }

    /// Due, not failed, and no older event of the user still to deliver; `?` is now.
    private static let claimable = """
        e.failed_at IS NULL AND e.next_attempt_at <= ?
            AND NOT EXISTS (SELECT 1 FROM webhook_events p WHERE p.user_id = e.user_id AND p.seq < e.seq AND p.failed_at IS NULL)
        """

    /// Takes up to `limit` due events for this worker, at most one per user (the user's oldest
    /// that has not failed). Each one's next attempt moves to `now + lease` in the same
    /// statement, so no other worker takes it meanwhile (nor the user's next event, which waits
    /// behind it), and one that dies mid-attempt leaves it to another once the lease has passed.
    /// On PostgreSQL, `SKIP LOCKED` lets instances that claim at once take disjoint rows.
    /// Oldest first by due time (the `webhook_events_due` index's order, so a long queue is not
    /// sorted on every claim); returned in outbox order.
    public func claimDue(now: Int64, lease: Int64, limit: Int) async throws -> [WebhookEvent] {
        guard limit > 0 else { return [] }
        let cipher = self.cipher
        return try await engine.write { connection in
            let lock = connection.dialect == .postgres ? "FOR UPDATE SKIP LOCKED" : ""
            let rows = try connection.query(
                """
                UPDATE webhook_events SET next_attempt_at = ?
                WHERE seq IN (
                    SELECT e.seq FROM webhook_events e WHERE \(Self.claimable)
                    ORDER BY e.next_attempt_at, e.seq LIMIT ? \(lock))
                RETURNING seq, id, user_id, type, body, created_at, attempts
                """,
                [.integer(now + lease), .integer(now), .integer(Int64(limit))])
            var events: [(seq: Int64, event: WebhookEvent)] = []
            for row in rows {
                let id = try row.string("id")
                guard let body = WebhookBodySeal.open(try row.string("body"), id: id, with: cipher) else {
                    // Sealed under another `data_key`: no attempt could ever send it. Failed in
                    // the claim's own transaction, so the user's later events go on and
                    // `webhooks failed` shows why.
                    try connection.run(
                        "UPDATE webhook_events SET attempts = attempts + 1, last_error = ?, failed_at = ? WHERE id = ?",
                        [.text(Self.unopenedError), .integer(now), .text(id)])
                    continue
                }
                let event = WebhookEvent(
                    id: id, userID: try row.string("user_id"), type: try row.string("type"), body: body,
                    createdAt: try row.int64("created_at"), attempts: try row.int("attempts"))
                events.append((try row.int64("seq"), event))
            }
            return events.sorted { $0.seq < $1.seq }.map(\.event)
        }
    }

    static let unopenedError = "the body is sealed and does not open with this data_key"

    /// The receiver accepted the event: its row goes, and the user's next event is due.
    public func markDelivered(id: String) async throws {
        try await engine.write { _ = try $0.run("DELETE FROM webhook_events WHERE id = ?", [.text(id)]) }
    }

    /// An attempt failed with `error` (a status or a transport failure; never a body or a
    /// secret, and at most 200 characters are kept). Within `retention` of its creation the
    /// event is tried again after `retryDelay`, but no later than the end of its retention, so
    /// its last attempt falls there; after that it is marked failed, and no longer holds back
    /// the user's later events.
    @discardableResult
    public func recordFailure(_ event: WebhookEvent, error: String, now: Int64, retryDelay: Int64, retention: Int64) async throws -> FailureOutcome {
        let deadline = event.createdAt + retention
        let outcome: FailureOutcome = now >= deadline ? .failed : .retrying(at: min(now + retryDelay, deadline))
        let nextAttemptAt: Int64
        let failedAt: SQLiteValue
        switch outcome {
        case .retrying(let at): (nextAttemptAt, failedAt) = (at, .null)
        case .failed: (nextAttemptAt, failedAt) = (now, .integer(now))
        }
        try await engine.write {
            _ = try $0.run(
                "UPDATE webhook_events SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, failed_at = ? WHERE id = ? AND failed_at IS NULL",
                [.text(String(error.prefix(200))), .integer(nextAttemptAt), failedAt, .text(event.id)])
        }
        return outcome
    }

    /// Failed events, oldest first.
    public func failed(limit: Int = 1_000) async throws -> [FailedWebhookEvent] {
        try await engine.read { connection in
            try connection.query(
                """
                SELECT id, type, user_id, attempts, created_at, failed_at, last_error FROM webhook_events
                WHERE failed_at IS NOT NULL ORDER BY seq LIMIT ?
                """,
                [.integer(Int64(limit))]
            ).map { row in
                FailedWebhookEvent(
                    id: try row.string("id"), type: try row.string("type"), userID: try row.string("user_id"), attempts: try row.int("attempts"),
                    createdAt: try row.int64("created_at"), failedAt: try row.int64("failed_at"), lastError: try row.optionalString("last_error"))
            }
        }
    }

    /// Queues a failed event again, due at `now`, its attempts counted from zero; false when no
    /// failed event has that id. Its retention still counts from its creation, so it has one
    /// more attempt (in its user's order: it goes before the user's later events that are still
    /// waiting), and is failed again if that fails too.
    public func requeue(id: String, now: Int64) async throws -> Bool {
        try await engine.write {
            try $0.run(
                "UPDATE webhook_events SET failed_at = NULL, attempts = 0, next_attempt_at = ? WHERE id = ? AND failed_at IS NOT NULL",
                [.integer(now), .text(id)]) == 1
        }
    }

    /// Queues every failed event again (see `requeue(id:now:)`); returns how many.
    public func requeueAll(now: Int64) async throws -> Int {
        try await engine.write {
            try $0.run("UPDATE webhook_events SET failed_at = NULL, attempts = 0, next_attempt_at = ? WHERE failed_at IS NOT NULL", [.integer(now)])
        }
    }

    /// Events waiting for delivery (failed ones are not) and the creation time of the oldest,
    /// for `siwa_webhook_queue_depth` and `siwa_webhook_oldest_age_seconds`.
    public func depth() async throws -> (count: Int, oldestCreatedAt: Int64?) {
        try await engine.read { connection in
            let row = try connection.queryOne("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_events WHERE failed_at IS NULL")
            return (try row?.int("n") ?? 0, try row?.optionalInt64("oldest"))
        }
    }
}

extension WebhookQueue {
    /// The queue of the database at `location` alone, for the operators' commands (`webhooks
    /// failed`, `webhooks retry`): no data key (no sealed column is read) and no session cache.
    /// The database must exist (a SQLite path names no new file); its schema is brought up to
    /// date as any start would. Closed when `body` returns.
    public static func withQueue<T>(at location: String, _ body: (WebhookQueue) async throws -> T) async throws -> T {
        let engine: any StoreEngine
        if Store.isPostgres(location) {
            try Store.migratePostgres(location)
            let pool = try PostgresEngine.mappingUnavailable { try PostgresPool(location, size: 1, applicationName: "siwa-server webhooks") }
            engine = PostgresEngine(pool: pool, url: location, listener: nil, cache: nil)
        } else {
            guard access(location, F_OK) == 0 else { throw MissingDatabase(path: location) }
            engine = SQLiteEngine(database: try StoreOpener.open(path: location, readers: 1))
        }
        defer { engine.close() }
        return try await body(WebhookQueue(engine: engine, cipher: nil))
    }
}
