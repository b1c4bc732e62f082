/// A Prometheus histogram's counts (cumulative only when rendered).
package struct Histogram: Sendable {
    /// Seconds; spans a cached read (sub-millisecond) to a slow call to Apple (10 s).
    package static let defaultBounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    package let bounds: [Double]
    private(set) var counts: [UInt64]
    private(set) var sum: Double = 0
    private(set) var count: UInt64 = 0

    package init(bounds: [Double] = Histogram.defaultBounds) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count)
    }

    package mutating func add(_ other: Histogram) {
        precondition(bounds == other.bounds, "histograms with different buckets")
        for index in counts.indices { counts[index] += other.counts[index] }
        sum += other.sum
        count += other.count
    }

    package mutating func observe(_ value: Double) {
        // Linear scan: 14 bounds, and most observations land in the first few.
        for index in bounds.indices where value <= bounds[index] {
            counts[index] += 1
            break
        }
        sum += value
        count += 1
    }

    /// Appends `name_bucket`, `name_sum` and `name_count` lines with `labels` (already rendered,
    /// without braces; may be empty).
    package func render(name: String, labels: String, into output: inout String) {
        let prefix = labels.isEmpty ? "" : labels + ","
        var cumulative: UInt64 = 0
        for (bound, bucketCount) in zip(bounds, counts) {
            cumulative += bucketCount
            output += "\(name)_bucket{\(prefix)le=\"\(PrometheusText.number(bound))\"} \(cumulative)\n"
        }
        output += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(count)\n"
        let braces = labels.isEmpty ? "" : "{\(labels)}"
        output += "\(name)_sum\(braces) \(PrometheusText.number(sum))\n"
        output += "\(name)_count\(braces) \(count)\n"
    }
}
