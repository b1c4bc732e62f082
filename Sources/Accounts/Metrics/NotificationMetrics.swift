import Synchronization

/// `siwa_notifications_total{type,outcome}`: types from a fixed list, outcomes `processed`,
/// `duplicate`, `ignored`, `invalid`.
package final class NotificationMetrics: Sendable {
    private let counts = Mutex<[String: [String: UInt64]]>([:])

    package init() {}

    package func record(type: String, outcome: String) {
        counts.withLock { $0[type, default: [:]][outcome, default: 0] += 1 }
    }

    package func render(into output: inout String) {
        let snapshot = counts.withLock { $0 }
        PrometheusText.header("siwa_notifications_total", type: "counter", help: "Server-to-server notification events by type and outcome.", into: &output)
        for (type, outcomes) in snapshot.sorted(by: { $0.key < $1.key }) {
            for (outcome, count) in outcomes.sorted(by: { $0.key < $1.key }) {
                output += "siwa_notifications_total{\(PrometheusText.labels(["type": type, "outcome": outcome]))} \(count)\n"
            }
        }
    }
}
