/// RFC 3339 times in UTC: whole seconds for the API (`2026-11-22T10:00:00Z`, docs/reference/http-api.md), and the
/// date-time part of log timestamps, which add milliseconds (`LogTimestamp`).
package enum RFC3339 {
    /// Written digit by digit into 20 bytes: two of these are on every `/api/me`.
    package static func format(_ seconds: Int64) -> String {
        String(unsafeUninitializedCapacity: 20) { buffer in
            writeDateTime(seconds: Int(seconds), into: buffer)
            buffer[19] = UInt8(ascii: "Z")
            return 20
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS` (19 bytes) into the start of `buffer`, by Howard Hinnant's
    /// days-to-civil algorithm: pure arithmetic, no `gmtime_r` and no time-zone files. Years
    /// outside 0...9999 are clamped to it, so the width never changes.
    package static func writeDateTime(seconds: Int, into buffer: UnsafeMutableBufferPointer<UInt8>) {
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

        func put(_ value: Int, width: Int, at offset: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            let value = min(max(value, 0), divisor * 10 - 1)
            for index in 0..<width {
                buffer[offset + index] = UInt8(ascii: "0") + UInt8(value / divisor % 10)
                divisor /= 10
            }
        }
        put(year, width: 4, at: 0)
        buffer[4] = UInt8(ascii: "-")
        put(month, width: 2, at: 5)
        buffer[7] = UInt8(ascii: "-")
        put(day, width: 2, at: 8)
        buffer[10] = UInt8(ascii: "T")
        put(secondOfDay / 3_600, width: 2, at: 11)
        buffer[13] = UInt8(ascii: ":")
        put(secondOfDay / 60 % 60, width: 2, at: 14)
        buffer[16] = UInt8(ascii: ":")
        put(secondOfDay % 60, width: 2, at: 17)
    }
}
