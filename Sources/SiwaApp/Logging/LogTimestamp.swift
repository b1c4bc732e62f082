#if canImport(Glibc)
import Accounts
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// RFC 3339 UTC timestamps with milliseconds (`2026-11-22T10:00:00.123Z`), cheap enough to
/// stamp every log line: the calendar part (`RFC3339`) is a few divisions, computed in place; a
/// shared once-a-second cache cost every line a lock that all I/O threads contended for.
enum LogTimestamp {
    /// A wall-clock instant in whole seconds since 1970 plus milliseconds.
    struct Instant: Equatable, Sendable {
        var seconds: Int
        var milliseconds: Int
    }

    static func now() -> Instant {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Instant(seconds: Int(spec.tv_sec), milliseconds: Int(spec.tv_nsec) / 1_000_000)
    }

    /// Appends the 24-byte timestamp of `instant`.
    static func append(_ instant: Instant, to buffer: inout [UInt8]) {
        let millis = min(max(instant.milliseconds, 0), 999)
        // The calendar part changes once a second; a busy thread stamps thousands of lines in
        // between, so it keeps the last one (its own copy: nothing shared, no lock).
        let thread = ThreadLogRings.current
        if thread.stampedSecond != instant.seconds {
            thread.stampedDateTime.withUnsafeMutableBufferPointer { RFC3339.writeDateTime(seconds: instant.seconds, into: $0) }
            thread.stampedSecond = instant.seconds
        }
        buffer.append(contentsOf: thread.stampedDateTime)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 5) { bytes in
            bytes[0] = UInt8(ascii: ".")
            bytes[1] = UInt8(ascii: "0") + UInt8(millis / 100)
            bytes[2] = UInt8(ascii: "0") + UInt8(millis / 10 % 10)
            bytes[3] = UInt8(ascii: "0") + UInt8(millis % 10)
            bytes[4] = UInt8(ascii: "Z")
            buffer.append(contentsOf: bytes)
        }
    }

    static func string(_ instant: Instant) -> String {
        var bytes: [UInt8] = []
        append(instant, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
