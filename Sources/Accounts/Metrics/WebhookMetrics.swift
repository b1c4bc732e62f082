import Synchronization

/// `siwa_webhook_deliveries_total{type,outcome}` (types from the outbox's fixed list; outcomes
/// `delivered`, `retry`, `failed`), and `siwa_webhook_queue_depth` and
/// `siwa_webhook_oldest_age_seconds`, refreshed by the deliverer about once a second.
package final class WebhookMetrics: Sendable {
    private let deliveries = Mutex<[String: [String: UInt64]]>([:])
    private let queue = Mutex<(depth: Int, oldestAge: Int64)>((0, 0))

    package init() {}

    package func record(type: String, outcome: String) {
        deliveries.withLock { $0[type, default: [:]][outcome, default: 0] += 1 }
    }

    package func count(type: String, outcome: String) -> UInt64 {
        deliveries.withLock { $0[type]?[outcome] ?? 0 }
    }

    package func update(depth: Int, oldestAge: Int64) {
        queue.withLock { $0 = (depth, oldestAge) }
    }

    package func render(into output: inout String) {
        let counts = deliveries.withLock { $0 }
        PrometheusText.header("siwa_webhook_deliveries_total", type: "counter", help: "Webhook delivery attempts by event type and outcome.", into: &output)
        for (type, outcomes) in counts.sorted(by: { $0.key < $1.key }) {
            for (outcome, count) in outcomes.sorted(by: { $0.key < $1.key }) {
                output += "siwa_webhook_deliveries_total{\(PrometheusText.labels(["type": type, "outcome": outcome]))} \(count)\n"
            }
        }
        let snapshot = queue.withLock { $0 }
        PrometheusText.header("siwa_webhook_queue_depth", type: "gauge", help: "Webhook events waiting for delivery (failed ones are not counted).", into: &output)
        output += "siwa_webhook_queue_depth \(snapshot.depth)\n"
        PrometheusText.header("siwa_webhook_oldest_age_seconds", type: "gauge", help: "Age of the oldest webhook event waiting for delivery.", into: &output)
        output += "siwa_webhook_oldest_age_seconds \(snapshot.oldestAge)\n"
    }
}
