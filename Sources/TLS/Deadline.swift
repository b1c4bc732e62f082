import Glibc

/// A point on the monotonic clock (immune to wall-clock steps) by which an operation must end.
/// Every blocking wait on a socket is bounded by one.
public struct Deadline: Sendable, Comparable {
    /// Nanoseconds on `CLOCK_MONOTONIC`.
    public let uptimeNanoseconds: UInt64

    public init(uptimeNanoseconds: UInt64) {
        self.uptimeNanoseconds = uptimeNanoseconds
    }

    public static var now: Deadline {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Deadline(uptimeNanoseconds: UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec))
    }

    public static func after(_ duration: Duration) -> Deadline {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds) / 1_000_000_000)
        return Deadline(uptimeNanoseconds: now.uptimeNanoseconds &+ nanoseconds)
    }

    public var hasPassed: Bool { Deadline.now >= self }

    /// Whole milliseconds left, rounded up so a wait never ends just short of the deadline.
    public var remainingMilliseconds: Int32 {
        let current = Deadline.now.uptimeNanoseconds
        guard uptimeNanoseconds > current else { return 0 }
        return Int32(min(UInt64(Int32.max), (uptimeNanoseconds - current + 999_999) / 1_000_000))
    }

    public static func < (lhs: Deadline, rhs: Deadline) -> Bool {
        lhs.uptimeNanoseconds < rhs.uptimeNanoseconds
    }

    /// Waits until `fd` is ready for `events` (`POLLIN`, `POLLOUT`); false when the deadline
    /// passes first. Errors and hang-ups count as ready: the next read or write reports them.
    public func wait(for fd: Int32, events: Int16) -> Bool {
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let timeout = remainingMilliseconds
            if timeout == 0 {
                // One last non-blocking look, so an already-ready socket is never called late.
                return poll(&descriptor, 1, 0) > 0
            }
            let result = poll(&descriptor, 1, timeout)
            if result > 0 { return true }
            if result < 0, errno != EINTR { return true }
        }
    }
}
