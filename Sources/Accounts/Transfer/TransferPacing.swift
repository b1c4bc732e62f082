/// How fast the transfer commands call Apple: at most `rate` calls a second, slower after
/// Apple throttles or fails (each such answer halves the pace, each success wins a tenth of
/// it back), and a pause before asking again that doubles from `firstBackoff` to
/// `maximumBackoff`. After `maximumTries` unavailable answers in a row for one user the run
/// stops, with everything done so far kept, for a later run to continue.
package struct TransferPacing: Sendable {
    package var rate: Double
    package var firstBackoff: Double
    package var maximumBackoff: Double
    package var maximumTries: Int
    /// The slowest pace throttling brings the run down to, calls a second.
    package var slowestRate: Double

    package init(rate: Double, firstBackoff: Double = 0.2, maximumBackoff: Double = 10, maximumTries: Int = 8, slowestRate: Double = 0.5) {
        self.rate = rate
        self.firstBackoff = firstBackoff
        self.maximumBackoff = maximumBackoff
        self.maximumTries = maximumTries
        self.slowestRate = slowestRate
    }
}

/// The pace of one run, on the monotonic clock.
package struct TransferPacer {
    package let pacing: TransferPacing
    package private(set) var currentRate: Double
    private var nextCallAt: Double = 0
    private var failuresInARow = 0

    package init(_ pacing: TransferPacing) {
        self.pacing = pacing
        currentRate = pacing.rate
    }

    /// How long to wait before the next call, taking its turn.
    package mutating func delayBeforeCall(now: Double) -> Double {
        let at = max(now, nextCallAt)
        nextCallAt = at + 1 / currentRate
        return at - now
    }

    package mutating func succeeded() {
        failuresInARow = 0
        currentRate = min(pacing.rate, currentRate * 1.1)
    }

    /// Apple was unavailable or throttled: the pause before asking again, or nil when this
    /// user has had `maximumTries` and the run should stop.
    package mutating func failed() -> Double? {
        failuresInARow += 1
        currentRate = max(pacing.slowestRate, currentRate / 2)
        guard failuresInARow < pacing.maximumTries else { return nil }
        var backoff = pacing.firstBackoff
        for _ in 1..<failuresInARow { backoff = min(pacing.maximumBackoff, backoff * 2) }
        return backoff
    }
}
