#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// RFC 3339 UTC timestamps with milliseconds (`2026-11-22T10:00:00.123Z`), cheap enough to
/// stamp every log line: the calendar part is computed once per second and reused.
enum LogTimestamp {
    /// A wall-clock instant in whole seconds since 1970 plus milliseconds.
    struct Instant: Equatable, Sendable {
        var seconds: Int
        var milliseconds: Int
    }

    private static let cache = Mutex<(second: Int, prefix: [UInt8])>((Int.min, []))

    static func now() -> Instant {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Instant(seconds: Int(spec.tv_sec), milliseconds: Int(spec.tv_nsec) / 1_000_000)
    }

    /// Appends the 24-byte timestamp of `instant`.
    static func append(_ instant: Instant, to buffer: inout [UInt8]) {
        let prefix = cache.withLock { cached in
            if cached.second != instant.seconds {
                cached = (instant.seconds, calendarPrefix(seconds: instant.seconds))
            }
            return cached.prefix
        }
        buffer.append(contentsOf: prefix)
        let millis = min(max(instant.milliseconds, 0), 999)
        buffer.append(UInt8(ascii: "."))
        buffer.append(UInt8(ascii: "0") + UInt8(millis / 100))
        buffer.append(UInt8(ascii: "0") + UInt8(millis / 10 % 10))
        buffer.append(UInt8(ascii: "0") + UInt8(millis % 10))
        buffer.append(UInt8(ascii: "Z"))
    }

    static func string(_ instant: Instant) -> String {
        var bytes: [UInt8] = []
        append(instant, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `YYYY-MM-DDTHH:MM:SS` in UTC, by Howard Hinnant's days-to-civil algorithm: pure arithmetic,
    /// no `gmtime_r` and no time-zone files.
    static func calendarPrefix(seconds: Int) -> [UInt8] {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)

        var out: [UInt8] = []
        out.reserveCapacity(19)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            let value = min(max(value, 0), divisor * 10 - 1)
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(year, 4)
        out.append(UInt8(ascii: "-"))
        digits(month, 2)
        out.append(UInt8(ascii: "-"))
        digits(day, 2)
        out.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3_600, 2)
        out.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2)
        out.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2)
        return out
    }
}
