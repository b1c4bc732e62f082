import Glibc

/// API times: RFC 3339 in UTC with whole seconds, e.g. `2026-11-22T10:00:00Z` (SPEC §4).
enum RFC3339 {
    /// Written digit by digit into 20 bytes: two of these are on every `/api/me`.
    static func format(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(unsafeUninitializedCapacity: 20) { buffer in
            func put(_ value: Int32, width: Int, at offset: Int) {
                var rest = max(0, value)
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            put(parts.tm_year + 1900, width: 4, at: 0)
            put(parts.tm_mon + 1, width: 2, at: 5)
            put(parts.tm_mday, width: 2, at: 8)
            put(parts.tm_hour, width: 2, at: 11)
            put(parts.tm_min, width: 2, at: 14)
            put(parts.tm_sec, width: 2, at: 17)
            for (offset, byte) in [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "Z")] as [(Int, Unicode.Scalar)] {
                buffer[offset] = UInt8(ascii: byte)
            }
            return 20
        }
    }
}
