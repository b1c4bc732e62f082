import AppleClient
import Synchronization

/// `siwa_apple_requests_total{endpoint,outcome}`, `siwa_apple_request_duration_seconds{endpoint}`,
/// `siwa_jwks_refreshes_total{outcome}` and `siwa_token_verification_failures_total{reason}`.
/// Labels come from fixed vocabularies (endpoints, outcomes, reason codes).
package final class AppleMetrics: AppleCallObserver, Sendable {
    private struct State {
        package var calls: [String: [String: UInt64]] = [:]
        package var durations: [String: Histogram] = [:]
        package var refreshes: [String: UInt64] = [:]
        package var verificationFailures: [String: UInt64] = [:]

        package init(calls: [String: [String: UInt64]] = [:], durations: [String: Histogram] = [:], refreshes: [String: UInt64] = [:], verificationFailures: [String: UInt64] = [:]) {
            self.calls = calls
            self.durations = durations
            self.refreshes = refreshes
            self.verificationFailures = verificationFailures
        }
    }

    private let state = Mutex(State())

    package func appleCall(endpoint: AppleEndpoint, outcome: String, seconds: Double) {
        state.withLock {
            $0.calls[endpoint.rawValue, default: [:]][outcome, default: 0] += 1
            $0.durations[endpoint.rawValue, default: Histogram()].observe(seconds)
        }
    }

    package func keySetRefreshed(outcome: String) {
        state.withLock { $0.refreshes[outcome, default: 0] += 1 }
    }

    package func verificationFailed(reason: String) {
        state.withLock { $0.verificationFailures[reason, default: 0] += 1 }
    }

    package func render(into output: inout String) {
        let snapshot = state.withLock { $0 }
        PrometheusText.header("siwa_apple_requests_total", type: "counter", help: "Calls to Apple by endpoint and outcome.", into: &output)
        for (endpoint, outcomes) in snapshot.calls.sorted(by: { $0.key < $1.key }) {
            for (outcome, count) in outcomes.sorted(by: { $0.key < $1.key }) {
                output += "siwa_apple_requests_total{\(PrometheusText.labels(["endpoint": endpoint, "outcome": outcome]))} \(count)\n"
            }
        }
        PrometheusText.header("siwa_apple_request_duration_seconds", type: "histogram", help: "Duration of calls to Apple, by endpoint.", into: &output)
        for (endpoint, histogram) in snapshot.durations.sorted(by: { $0.key < $1.key }) {
            histogram.render(name: "siwa_apple_request_duration_seconds", labels: PrometheusText.labels(["endpoint": endpoint]), into: &output)
        }
        PrometheusText.header("siwa_jwks_refreshes_total", type: "counter", help: "Fetches of Apple's signing keys by outcome.", into: &output)
        for (outcome, count) in snapshot.refreshes.sorted(by: { $0.key < $1.key }) {
            output += "siwa_jwks_refreshes_total{\(PrometheusText.labels(["outcome": outcome]))} \(count)\n"
        }
        PrometheusText.header("siwa_token_verification_failures_total", type: "counter", help: "Refused Apple tokens by reason.", into: &output)
        for (reason, count) in snapshot.verificationFailures.sorted(by: { $0.key < $1.key }) {
            output += "siwa_token_verification_failures_total{\(PrometheusText.labels(["reason": reason]))} \(count)\n"
        }
    }
}
