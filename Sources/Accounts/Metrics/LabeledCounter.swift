import Synchronization

/// A counter with one label, e.g. `siwa_sign_ins_total{outcome}`. Label values must come
/// from a fixed vocabulary (outcomes, error codes), never from request data.
package final class LabeledCounter: Sendable {
    package let name: String
    package let help: String
    package let label: String
    private let counts = Mutex<[String: UInt64]>([:])

    package init(name: String, help: String, label: String) {
        self.name = name
        self.help = help
        self.label = label
    }

    package func increment(_ value: String) {
        counts.withLock { $0[value, default: 0] += 1 }
    }

    package func count(_ value: String) -> UInt64 {
        counts.withLock { $0[value] ?? 0 }
    }

    package func render(into output: inout String) {
        let snapshot = counts.withLock { $0 }
        PrometheusText.header(name, type: "counter", help: help, into: &output)
        for (value, count) in snapshot.sorted(by: { $0.key < $1.key }) {
            output += "\(name){\(label)=\"\(PrometheusText.escape(value))\"} \(count)\n"
        }
    }
}
