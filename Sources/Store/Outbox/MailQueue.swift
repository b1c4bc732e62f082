import JSON
import OpenSSLCrypto

/// Delivery's side of the mail outbox (docs/guides/passwords-and-email.md), on the machinery it shares with webhooks
/// (`OutboxQueue`): leased claims (`SKIP LOCKED` on PostgreSQL, so one instance sends each
/// message), back-off within `email_retention`, failed rows until `email retry`. Messages are
/// not ordered per user: one that cannot be delivered holds back nothing.
public struct MailQueue: Sendable {
    private let queue: OutboxQueue

    init(engine: any StoreEngine, cipher: AESGCM?) {
        queue = OutboxQueue(engine: engine, table: .mail, cipher: cipher)
    }

    /// Whether a claim at `now` would take a message (a read).
    public func hasDue(now: Int64) async throws -> Bool {
        try await queue.hasDue(now: now)
    }

    /// Takes up to `limit` due messages for this worker, leased until `now + lease`.
    public func claimDue(now: Int64, lease: Int64, limit: Int) async throws -> [QueuedMail] {
        try await queue.claimDue(
            now: now, lease: lease, limit: limit, columns: "user_id, kind, recipient, language, message_id, created_at, attempts"
        ) { row, body in
            var values: [String: String] = [:]
            for (key, value) in (try? JSONParser.object(Array(body.utf8))) ?? JSONObject() {
                if let text = value.string { values[key] = text }
            }
            return QueuedMail(
                id: try row.string("id"), userID: try row.optionalString("user_id"), kind: try row.string("kind"),
                recipient: try row.string("recipient"), language: try row.string("language"), messageID: try row.string("message_id"),
                values: values, createdAt: try row.int64("created_at"), attempts: try row.int("attempts"))
        }
    }

    /// The SMTP server accepted the message: its row goes.
    public func markDelivered(id: String) async throws {
        try await queue.markDelivered(id: id)
    }

    /// An attempt failed with `error` (never a code or a password). Retried after `retryDelay`
    /// within `retention`, else failed; `permanent` (a 5xx to `RCPT TO`) fails it at once.
    @discardableResult
    public func recordFailure(
        _ mail: QueuedMail, error: String, now: Int64, retryDelay: Int64, retention: Int64, permanent: Bool = false
    ) async throws -> OutboxFailureOutcome {
        try await queue.recordFailure(
            id: mail.id, createdAt: mail.createdAt, error: error, now: now, retryDelay: retryDelay, retention: retention, permanent: permanent)
    }

    /// Failed messages, oldest first.
    public func failed(limit: Int = 1_000) async throws -> [FailedMail] {
        try await queue.failed(limit: limit, columns: "id, kind, user_id, recipient, attempts, created_at, failed_at, last_error") { row in
            FailedMail(
                id: try row.string("id"), kind: try row.string("kind"), userID: try row.optionalString("user_id"),
                recipient: try row.string("recipient"), attempts: try row.int("attempts"), createdAt: try row.int64("created_at"),
                failedAt: try row.int64("failed_at"), lastError: try row.optionalString("last_error"))
        }
    }

    /// Queues a failed message again, due at `now`; false when no failed message has that id.
    /// Its retention still counts from its creation: one more attempt, then failed again if
    /// that fails too.
    public func requeue(id: String, now: Int64) async throws -> Bool {
        try await queue.requeue(id: id, now: now)
    }

    /// Queues every failed message again; returns how many.
    public func requeueAll(now: Int64) async throws -> Int {
        try await queue.requeueAll(now: now)
    }

    /// Messages waiting for delivery (failed ones are not), for `siwa_email_queue_depth`.
    public func depth() async throws -> (count: Int, oldestCreatedAt: Int64?) {
        try await queue.depth()
    }
}

extension MailQueue {
    /// The queue of the database at `location` alone, for `siwa-server email failed|retry`:
    /// no data key (no values are read). Closed when `body` returns.
    public static func withQueue<T>(at location: String, _ body: (MailQueue) async throws -> T) async throws -> T {
        try await OutboxQueue.withEngine(at: location, applicationName: "siwa-server email") { engine in
            try await body(MailQueue(engine: engine, cipher: nil))
        }
    }
}
