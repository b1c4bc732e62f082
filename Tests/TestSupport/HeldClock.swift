import Glibc
import Synchronization

/// A wall clock in whole seconds that moves only when a test says so: a timing test advances
/// it past a TTL, a backoff or a rate limit's refill instead of sleeping.
public final class HeldClock: Sendable {
    private let seconds: Mutex<Int64>
    private let monotonicSeconds = Mutex<Double>(0)

    /// Starts at `start` (now, by default).
    public init(_ start: Int64 = Int64(time(nil))) { seconds = Mutex(start) }

    public var now: Int64 { seconds.withLock { $0 } }

    public func advance(by delta: Int64) { seconds.withLock { $0 += delta } }

    /// The time as a reader to hand to code that takes one.
    public var read: @Sendable () -> Int64 { { [self] in now } }

    /// Monotonic seconds, held too: moved only by `sleep`, which a paced loop is handed in place
    /// of a real pause, so that its pauses take no time and still count.
    public var monotonic: Double { monotonicSeconds.withLock { $0 } }

    public func sleep(_ seconds: Double) { monotonicSeconds.withLock { $0 += seconds } }
}
