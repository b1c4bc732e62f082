/// When to try connecting again after a failure: `initial` (50 ms by default) after the first,
/// doubling to at most `maximum` (2 s), back to `initial` once a connection succeeds. Spares a
/// restarting server a storm of attempts, and lets callers fail at once in between.
public struct ReconnectBackoff: Sendable {
    public let initial: Duration
    public let maximum: Duration
    private(set) var delay: Duration
    /// No attempt before this; nil when the last attempt succeeded.
    private(set) var retryAt: ContinuousClock.Instant?
    /// Why the last attempt failed, while backing off.
    private(set) var lastFailure: PostgresError?

    public init(initial: Duration = .milliseconds(50), maximum: Duration = .seconds(2)) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        delay = initial
    }

    func mayAttempt(at now: ContinuousClock.Instant) -> Bool {
        retryAt.map { now >= $0 } ?? true
    }

    mutating func failed(_ error: PostgresError, at now: ContinuousClock.Instant) {
        lastFailure = error
        // Several workers that tried at once fail at once: count that as one failure.
        if let retryAt, retryAt > now { return }
        retryAt = now + delay
        delay = min(delay * 2, maximum)
    }

    mutating func succeeded() {
        delay = initial
        retryAt = nil
        lastFailure = nil
    }
}
