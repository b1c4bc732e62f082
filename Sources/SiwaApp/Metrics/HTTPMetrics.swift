import Accounts
import HTTPServer
import Synchronization

/// `siwa_http_requests_total{route,method,status}` and
/// `siwa_http_request_duration_seconds{route}`. Label values come from the route table, not
/// from the request path, so a scan of random URLs cannot grow the series without bound.
final class HTTPMetrics: Sendable {
    private struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    private struct State {
        var requests: [RequestKey: UInt64] = [:]
        var durations: [String: Histogram] = [:]
    }

    private final class Stripe: Sendable {
        let state = Mutex(State())
    }

    /// Striped by thread so that I/O loops rarely wait on each other's lock.
    private let stripes: [Stripe]

    init(stripes: Int = 8) {
        self.stripes = (0..<max(1, stripes)).map { _ in Stripe() }
    }

    func record(route: String?, method: String, status: Int, durationSeconds: Double) {
        let route = route ?? "unmatched"
        let method = Self.isKnown(method) ? method : "other"
        let stripe = stripes[Int(ThreadIdentity.current % UInt(stripes.count))]
        stripe.state.withLock { state in
            state.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
            state.durations[route, default: Histogram()].observe(durationSeconds)
        }
    }

    /// Compared, not hashed: a set lookup hashed the method on every request.
    private static func isKnown(_ method: String) -> Bool {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS": true
        default: false
        }
    }

    func render(into output: inout String) {
        var requests: [RequestKey: UInt64] = [:]
        var durations: [String: Histogram] = [:]
        for stripe in stripes {
            stripe.state.withLock { state in
                requests.merge(state.requests, uniquingKeysWith: +)
                for (route, histogram) in state.durations {
                    durations[route] = durations[route].map { $0.merged(with: histogram) } ?? histogram
                }
            }
        }
        PrometheusText.header("siwa_http_requests_total", type: "counter", help: "HTTP requests by route, method and status.", into: &output)
        for (key, count) in requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            let labels = PrometheusText.labels(["route": key.route, "method": key.method, "status": String(key.status)])
            output += "siwa_http_requests_total{\(labels)} \(count)\n"
        }
        PrometheusText.header("siwa_http_request_duration_seconds", type: "histogram", help: "Time from a complete request to its response, by route.", into: &output)
        for (route, histogram) in durations.sorted(by: { $0.key < $1.key }) {
            histogram.render(name: "siwa_http_request_duration_seconds", labels: PrometheusText.labels(["route": route]), into: &output)
        }
    }
}

extension Histogram {
    func merged(with other: Histogram) -> Histogram {
        var merged = self
        merged.add(other)
        return merged
    }
}
