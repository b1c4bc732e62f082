import Testing
@testable import SiwaApp

/// The back-off shared by revocations and webhook deliveries.
@Suite struct RetryBackoffTests {
    @Test func backOffDoublesWithJitterUpToTheMaximum() {
        for _ in 0..<50 {
            #expect((4...6).contains(RetryBackoff.delay(attempt: 1, base: 5, max: 3600)))
            #expect((8...12).contains(RetryBackoff.delay(attempt: 2, base: 5, max: 3600)))
            #expect((2880...4320).contains(RetryBackoff.delay(attempt: 40, base: 5, max: 3600)))
            // A base above the maximum is held to it.
            #expect((2880...4320).contains(RetryBackoff.delay(attempt: 1, base: 7200, max: 3600)))
            #expect(RetryBackoff.delay(attempt: 1, base: 1, max: 3600) == 1)
        }
    }
}
