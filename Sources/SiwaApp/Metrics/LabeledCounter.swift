import Synchronization

/// A counter with one label, e.g. `siwa_sign_ins_total{outcome}`. Label values must come
/// from a fixed vocabulary (outcomes, error codes), never from request data.
final class LabeledCounter: Sendable {
    let name: String
    let help: String
    let label: String
    private let counts = Mutex<[String: UInt64]>([:])

    init(name: String, help: String, label: String) {
        self.name = name
        self.help = help
        self.label = label
    }

    func increment(_ value: String) {
        counts.withLock { $0[value, default: 0] += 1 }
    }

    func count(_ value: String) -> UInt64 {
        counts.withLock { $0[value] ?? 0 }
    }

    func render(into output: inout String) {
        let snapshot = counts.withLock { $0 }
        PrometheusText.header(name, type: "counter", help: help, into: &output)
        for (value, count) in snapshot.sorted(by: { $0.key < $1.key }) {
            output += "\(name){\(label)=\"\(PrometheusText.escape(value))\"} \(count)\n"
        }
    }
}
