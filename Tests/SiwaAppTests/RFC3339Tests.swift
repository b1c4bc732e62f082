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

    @Test func agreesWithFoundationOverManyInstants() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        for _ in 0..<1_000 {
            let seconds = Int64.random(in: 0...4_102_444_800)
            #expect(RFC3339.format(seconds) == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))))
        }
    }
}
