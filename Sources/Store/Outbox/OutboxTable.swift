/// One outbox's table, for the queue machinery its outboxes share (`OutboxQueue`). Each table
/// has `seq`, `id`, `user_id`, `body` (sealed when it holds a secret, see `OutboxBodySeal`),
/// `created_at`, `attempts`, `next_attempt_at`, `last_error` and `failed_at`, and its own
/// columns besides.
struct OutboxTable: Sendable {
    let name: String
    /// Whether a user's rows go one at a time in order (webhooks: a receiver sees a user's
    /// changes in the order they happened). Mail does not wait: one undeliverable message must
    /// not hold back a user's next code.
    let orderedPerUser: Bool

    static let webhooks = OutboxTable(name: "webhook_events", orderedPerUser: true)
    static let mail = OutboxTable(name: "mail_messages", orderedPerUser: false)
}
