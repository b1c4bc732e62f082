
/// Parses the durations of the configuration: `90s`, `15m`, `24h`, `30d`, or plain seconds.
///
/// Pure and strict: no signs, no fractions, no spaces inside, lower-case units only
/// (`30M` could be read as months). Values are capped at `maximumSeconds` so that code adding a
/// duration to a clock in nanoseconds can never overflow.
public enum DurationParser {
    public enum Failure: Error, Equatable, Sendable {
        /// Not digits followed by an optional unit (includes negative numbers and empty text).
        case notADuration
        /// Longer than `maximumSeconds` (or too large to count at all).
        case outOfRange
    }

    /// 100 years: far beyond any sensible setting, far below `Int64.max` nanoseconds.
    public static let maximumSeconds: Int64 = 36_525 * 86_400

    public static func parse(_ text: String) throws(Failure) -> Duration {
        .seconds(try seconds(text))
    }

    /// The number of whole seconds `text` names.
    public static func seconds(_ text: String) throws(Failure) -> Int64 {
        var bytes = Array(text.utf8)
        while let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { bytes.removeLast() }
        while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes.removeFirst() }

        var multiplier: Int64 = 1
        if let unit = bytes.last, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(unit) {
            switch unit {
            case UInt8(ascii: "s"): multiplier = 1
            case UInt8(ascii: "m"): multiplier = 60
            case UInt8(ascii: "h"): multiplier = 3_600
            case UInt8(ascii: "d"): multiplier = 86_400
            default: throw .notADuration
            }
            bytes.removeLast()
        }
        guard !bytes.isEmpty else { throw .notADuration }

        var value: Int64 = 0
        var overflowed = false
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { throw .notADuration }
            // Keep scanning after an overflow so that "99999999999999999999x" is still garbage.
            if overflowed { continue }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            if o1 || o2 { overflowed = true } else { value = sum }
        }
        if overflowed { throw .outOfRange }
        let (total, overflow) = value.multipliedReportingOverflow(by: multiplier)
        guard !overflow, total <= maximumSeconds else { throw .outOfRange }
        return total
    }

    /// Whole seconds from a JSON number.
    public static func seconds(fromInteger value: Int64) throws(Failure) -> Int64 {
        guard value >= 0 else { throw .notADuration }
        guard value <= maximumSeconds else { throw .outOfRange }
        return value
    }

    /// The shortest spelling `parse` reads back to the same value: `30d`, `90m`, `0s`.
    public static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds != 0 { return "\(duration)" }
        if seconds != 0 {
            for (unit, size) in [("d", Int64(86_400)), ("h", 3_600), ("m", 60)] where seconds % size == 0 {
                return "\(seconds / size)\(unit)"
            }
        }
        return "\(seconds)s"
    }
}
