import Glibc

/// The two clocks the server reads. `Application` takes them as a value, so a test can hold
/// time still or move it on instead of sleeping.
public struct Clocks: Sendable {
    /// Unix seconds: token times, expiries, everything stored.
    public var wall: @Sendable () -> Int64
    /// Seconds that never jump back: intervals (rate limits, key refreshes, timeouts).
    public var monotonic: @Sendable () -> Double

    public init(wall: @escaping @Sendable () -> Int64, monotonic: @escaping @Sendable () -> Double) {
        self.wall = wall
        self.monotonic = monotonic
    }

    public static let system = Clocks(
        wall: { Int64(time(nil)) },
        monotonic: {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        })
}
