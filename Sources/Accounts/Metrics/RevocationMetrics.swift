import Synchronization

/// `siwa_revocation_queue_depth` and `siwa_revocation_oldest_age_seconds` (a revocation
/// pending for more than a day shows here), refreshed by the queue's worker every second.
package final class RevocationMetrics: Sendable {
    private let state = Mutex<(depth: Int, oldestAge: Int64)>((0, 0))
    private let passes = Atomic<Int>(0)

    package init() {}

    package func update(depth: Int, oldestAge: Int64) {
        state.withLock { $0 = (depth, oldestAge) }
    }

    /// The worker's passes over the queue so far, each counted once it is over: a test that
    /// must see what the worker does (or does not do) at a given time waits for the next one
    /// instead of sleeping. Not exported.
    package var workerPasses: Int { passes.load(ordering: .acquiring) }

    package func workerPassed() { passes.add(1, ordering: .releasing) }

    package func render(into output: inout String) {
        let snapshot = state.withLock { $0 }
        PrometheusText.header("siwa_revocation_queue_depth", type: "gauge", help: "Revocations Apple has not accepted yet.", into: &output)
        output += "siwa_revocation_queue_depth \(snapshot.depth)\n"
        PrometheusText.header("siwa_revocation_oldest_age_seconds", type: "gauge", help: "Age of the oldest pending revocation.", into: &output)
        output += "siwa_revocation_oldest_age_seconds \(snapshot.oldestAge)\n"
    }
}
