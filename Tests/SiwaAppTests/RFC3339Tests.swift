import Foundation
import Testing
@testable import SiwaApp

@Suite struct RFC3339Tests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"), (1_800_000_000, "2027-01-15T08:00:00Z"), (951_782_400, "2000-02-29T00:00:00Z"),
        (253_402_300_799, "9999-12-31T23:59:59Z"),
    ])
    func formatsUTCWithWholeSeconds(_ seconds: Int64, _ expected: String) {
        #expect(RFC3339.format(seconds) == expected)
    }

    /// Before 1970 too (stored times never are, but the arithmetic must not care).
    @Test(arguments: [
        (Int64(-1), "1969-12-31T23:59:59Z"), (-86_400, "1969-12-31T00:00:00Z"), (-2_208_988_800, "1900-01-01T00:00:00Z"),
        (-62_167_219_200, "0000-01-01T00:00:00Z"),
    ])
    func formatsInstantsBefore1970(_ seconds: Int64, _ expected: String) {
        #expect(RFC3339.format(seconds) == expected)
    }

    /// The width is fixed: a year outside 0...9999 is clamped, never written with more digits.
    @Test func yearsOutsideFourDigitsAreClamped() {
        #expect(RFC3339.format(253_402_300_800) == "9999-01-01T00:00:00Z")
        #expect(RFC3339.format(-62_167_219_201) == "0000-12-31T23:59:59Z")
    }

    /// Log lines use the same date-time, then add milliseconds.
    @Test func logTimestampsShareTheDateTime() {
        for seconds in stride(from: -100_000, to: 4_200_000_000, by: 9_876_543) {
            let api = RFC3339.format(Int64(seconds))
            let log = LogTimestamp.string(.init(seconds: seconds, milliseconds: 42))
            #expect(log == api.dropLast() + ".042Z")
        }
    }

    @Test func agreesWithFoundationOverManyInstants() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        for _ in 0..<1_000 {
            let seconds = Int64.random(in: 0...4_102_444_800)
            #expect(RFC3339.format(seconds) == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))))
        }
    }
}
