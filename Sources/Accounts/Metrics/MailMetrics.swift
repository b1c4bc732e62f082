import Synchronization

/// `siwa_email_deliveries_total{kind,outcome}` (kinds of docs/guides/passwords-and-email.md; outcomes `delivered`,
/// `retry`, `failed`) and `siwa_email_queue_depth`, refreshed by the deliverer about once a
/// second.
package final class MailMetrics: Sendable {
    private let deliveries = Mutex<[String: [String: UInt64]]>([:])
    private let depth = Mutex<Int>(0)

    package init() {}

    package func record(kind: String, outcome: String) {
        deliveries.withLock { $0[kind, default: [:]][outcome, default: 0] += 1 }
    }

    package func count(kind: String, outcome: String) -> UInt64 {
        deliveries.withLock { $0[kind]?[outcome] ?? 0 }
    }

    package func update(depth count: Int) {
        depth.withLock { $0 = count }
    }

    package func render(into output: inout String) {
        let counts = deliveries.withLock { $0 }
        PrometheusText.header("siwa_email_deliveries_total", type: "counter", help: "Mail delivery attempts by kind and outcome.", into: &output)
        for (kind, outcomes) in counts.sorted(by: { $0.key < $1.key }) {
            for (outcome, count) in outcomes.sorted(by: { $0.key < $1.key }) {
                output += "siwa_email_deliveries_total{\(PrometheusText.labels(["kind": kind, "outcome": outcome]))} \(count)\n"
            }
        }
        PrometheusText.header("siwa_email_queue_depth", type: "gauge", help: "Messages waiting for delivery (failed ones are not counted).", into: &output)
        output += "siwa_email_queue_depth \(depth.withLock { $0 })\n"
    }
}
