import OpenSSLCrypto

/// Delivery's side of the webhook outbox (docs/guides/connecting-your-backend.md): events wait here, appended by the changes
/// they report, until the receiver accepts them or `webhook_retention` has passed.
///
/// Order per user: only a user's oldest event that has not failed can be claimed, so the next
/// one waits until the previous is delivered (its row deleted) or failed; other users' events do
/// not wait. A delivered event's row is deleted at once: nothing reads it afterwards, its body
/// holds the user's email, and a small table keeps claims cheap (the receiver drops repeats by
/// `webhook-id`; the log records the delivery).
public struct WebhookQueue: Sendable {
    /// What a failed attempt led to: tried again at a time, or (older than
    /// `webhook_retention`) failed, and the user's later events go on.
    public typealias FailureOutcome = OutboxFailureOutcome

    /// The machinery the outboxes share, on `webhook_events` (a user's events in order).
    private let queue: OutboxQueue

    init(engine: any StoreEngine, cipher: AESGCM?) {
        queue = OutboxQueue(engine: engine, table: .webhooks, cipher: cipher)
    }

    /// Whether a claim at `now` would take an event: one due that is its user's oldest not
    /// failed. A read, so an idle worker polls without writing, and a user's events waiting
    /// behind one in back-off cost nothing meanwhile.
    public func hasDue(now: Int64) async throws -> Bool {
        try await queue.hasDue(now: now)
    }

    /// Takes up to `limit` due events for this worker, at most one per user (the user's oldest
    /// that has not failed), leased until `now + lease` (nor is the user's next event taken
    /// meanwhile, since it waits behind this one). A body sealed under another `data_key` is
    /// failed in the claim, so the user's later events go on and `webhooks failed` shows why.
    public func claimDue(now: Int64, lease: Int64, limit: Int) async throws -> [WebhookEvent] {
        try await queue.claimDue(now: now, lease: lease, limit: limit, columns: "user_id, type, created_at, attempts") { row, body in
            WebhookEvent(
                id: try row.string("id"), userID: try row.string("user_id"), type: try row.string("type"), body: body,
                createdAt: try row.int64("created_at"), attempts: try row.int("attempts"))
        }
    }

    static let unopenedError = OutboxQueue.unopenedError

    /// The receiver accepted the event: its row goes, and the user's next event is due.
    public func markDelivered(id: String) async throws {
        try await queue.markDelivered(id: id)
    }

    /// An attempt failed with `error` (a status or a transport failure; never a body or a
    /// secret, and at most 200 characters are kept). Within `retention` of its creation the
    /// event is tried again after `retryDelay`, but no later than the end of its retention, so
    /// its last attempt falls there; after that it is marked failed, and no longer holds back
    /// the user's later events.
    @discardableResult
    public func recordFailure(_ event: WebhookEvent, error: String, now: Int64, retryDelay: Int64, retention: Int64) async throws -> FailureOutcome {
        try await queue.recordFailure(id: event.id, createdAt: event.createdAt, error: error, now: now, retryDelay: retryDelay, retention: retention)
    }

    /// Failed events, oldest first.
    public func failed(limit: Int = 1_000) async throws -> [FailedWebhookEvent] {
        try await queue.failed(limit: limit, columns: "id, type, user_id, attempts, created_at, failed_at, last_error") { row in
            FailedWebhookEvent(
                id: try row.string("id"), type: try row.string("type"), userID: try row.string("user_id"), attempts: try row.int("attempts"),
                createdAt: try row.int64("created_at"), failedAt: try row.int64("failed_at"), lastError: try row.optionalString("last_error"))
        }
    }

    /// Queues a failed event again, due at `now`, its attempts counted from zero; false when no
    /// failed event has that id. Its retention still counts from its creation, so it has one
    /// more attempt (in its user's order: it goes before the user's later events that are still
    /// waiting), and is failed again if that fails too.
    public func requeue(id: String, now: Int64) async throws -> Bool {
        try await queue.requeue(id: id, now: now)
    }

    /// Queues every failed event again (see `requeue(id:now:)`); returns how many.
    public func requeueAll(now: Int64) async throws -> Int {
        try await queue.requeueAll(now: now)
    }

    /// Events waiting for delivery (failed ones are not) and the creation time of the oldest,
    /// for `siwa_webhook_queue_depth` and `siwa_webhook_oldest_age_seconds`.
    public func depth() async throws -> (count: Int, oldestCreatedAt: Int64?) {
        try await queue.depth()
    }
}

extension WebhookQueue {
    /// The queue of the database at `location` alone, for the operators' commands (`webhooks
    /// failed`, `webhooks retry`): no data key (no sealed column is read) and no session cache.
    /// The database must exist (a SQLite path names no new file); its schema is brought up to
    /// date as any start would. Closed when `body` returns.
    public static func withQueue<T>(at location: String, _ body: (WebhookQueue) async throws -> T) async throws -> T {
        try await OutboxQueue.withEngine(at: location, applicationName: "siwa-server webhooks") { engine in
            try await body(WebhookQueue(engine: engine, cipher: nil))
        }
    }
}
