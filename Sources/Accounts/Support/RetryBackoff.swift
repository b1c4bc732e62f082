/// The delay before the next attempt of background work that failed (revocations at Apple,
/// webhook deliveries): `base` × 2^(attempt−1), capped at `max`, then ±20 % jitter so that many
/// queued rows that failed together do not retry in step.
package enum RetryBackoff {
    package static func delay(attempt: Int, base: Int64, max maximum: Int64) -> Int64 {
        let doubled = base << Int64(min(Swift.max(attempt, 1) - 1, 30))
        let capped = min(maximum, Swift.max(base, doubled))
        let jitter = Int64.random(in: -(capped / 5)...(capped / 5))
        return Swift.max(1, capped + jitter)
    }
}
