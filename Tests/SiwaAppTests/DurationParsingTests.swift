import Testing
@testable import SiwaApp

@Suite struct DurationParsingTests {
    @Test(arguments: [
        ("90s", Int64(90)),
        ("15m", 900),
        ("24h", 86_400),
        ("30d", 2_592_000),
        ("1d", 86_400),
    ])
    func eachUnit(text: String, seconds: Int64) throws {
        #expect(try DurationParser.seconds(text) == seconds)
        #expect(try DurationParser.parse(text) == .seconds(seconds))
    }

    @Test func plainSeconds() throws {
        #expect(try DurationParser.seconds("3600") == 3_600)
        #expect(try DurationParser.seconds(" 42 ") == 42)
        #expect(try DurationParser.seconds("007") == 7)
    }

    @Test func zero() throws {
        #expect(try DurationParser.seconds("0") == 0)
        #expect(try DurationParser.seconds("0s") == 0)
        #expect(try DurationParser.parse("0d") == .zero)
    }

    @Test(arguments: ["", " ", "s", "3x", "x3", "1.5h", "1h30m", "15 m", "15M", "abc", "1e3", "٣s", "+5", "ten"])
    func garbage(text: String) {
        #expect(throws: DurationParser.Failure.notADuration) { try DurationParser.seconds(text) }
    }

    @Test(arguments: ["-1", "-5s", "-0"])
    func negative(text: String) {
        #expect(throws: DurationParser.Failure.notADuration) { try DurationParser.seconds(text) }
        #expect(throws: DurationParser.Failure.notADuration) { try DurationParser.seconds(fromInteger: -1) }
    }

    @Test(arguments: [
        "9223372036854775807d",  // fits Int64 as digits, overflows when multiplied
        "99999999999999999999",  // does not fit Int64 at all
        "106752000000000d",
        "36526d",  // just over the cap
    ])
    func overflow(text: String) {
        #expect(throws: DurationParser.Failure.outOfRange) { try DurationParser.seconds(text) }
    }

    @Test func capIsInclusive() throws {
        #expect(try DurationParser.seconds("36525d") == DurationParser.maximumSeconds)
        #expect(throws: DurationParser.Failure.outOfRange) {
            try DurationParser.seconds(fromInteger: DurationParser.maximumSeconds + 1)
        }
    }

    @Test func garbageAfterHugeNumberIsStillGarbage() {
        #expect(throws: DurationParser.Failure.notADuration) { try DurationParser.seconds("99999999999999999999x9") }
    }

    @Test(arguments: [
        (Duration.seconds(30 * 86_400), "30d"),
        (.seconds(7_200), "2h"),
        (.seconds(90), "90s"),
        (.seconds(5_400), "90m"),
        (.zero, "0s"),
    ])
    func formatReadsBack(duration: Duration, text: String) throws {
        #expect(DurationParser.format(duration) == text)
        #expect(try DurationParser.parse(text) == duration)
    }
}
