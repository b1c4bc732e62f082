import Glibc

/// Nanoseconds on the monotonic clock: immune to wall-clock steps.
package enum MonotonicClock {
    @inlinable
    package static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
