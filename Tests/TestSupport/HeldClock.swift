import Glibc
import Synchronization

/// A wall clock in whole seconds that moves only when a test says so: a timing test advances
/// it past a TTL, a backoff or a rate limit's refill instead of sleeping.
public final class HeldClock: Sendable {
    private let seconds: Mutex<Int64>
    private let monotonicSeconds: Mutex<Double>

    /// Starts at `start` (now, by default), monotonic time at `monotonic`.
    public init(_ start: Int64 = Int64(time(nil)), monotonic: Double = 0) {
        seconds = Mutex(start)
        monotonicSeconds = Mutex(monotonic)
    }

    public var now: Int64 { seconds.withLock { $0 } }

    public func advance(by delta: Int64) { seconds.withLock { $0 += delta } }

    /// The time as a reader to hand to code that takes one.
    public var read: @Sendable () -> Int64 { { [self] in now } }

    /// Monotonic seconds, held too: a cache's ages, or a paced loop's pauses (handed
    /// `advanceMonotonic` in place of a real sleep, they take no time and still count).
    public var monotonic: Double { monotonicSeconds.withLock { $0 } }

    public func advanceMonotonic(by delta: Double) { monotonicSeconds.withLock { $0 += delta } }

    /// Monotonic time as a reader to hand to code that takes one.
    public var readMonotonic: @Sendable () -> Double { { [self] in monotonic } }
}
