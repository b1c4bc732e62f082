import Testing
@testable import SiwaApp

/// Tokens held in memory while neither the queue nor Apple takes them stay counted while the
/// worker tries to queue them: the stop's count and the bound never miss one in flight.
@Suite struct HeldRevocationsTests {
    static func held(_ n: Int) -> HeldRevocations.Held {
        HeldRevocations.Held(clientID: "com.example.app", token: "token-\(n)", kind: .refresh, since: Int64(n))
    }

    @Test func takenRevocationsCountUntilTheyAreSettled() {
        let held = HeldRevocations()
        #expect(held.hold(Self.held(1)) && held.hold(Self.held(2)))
        let taken = held.takeAll()
        #expect(taken.count == 2)
        #expect(held.count == 2, "in flight, still held")
        #expect(held.hold(Self.held(3)))
        #expect(held.count == 3)
        held.settle(taken: taken.count, notQueued: Array(taken[1...]))
        #expect(held.count == 2)
        #expect(held.takeAll().map(\.token) == ["token-2", "token-3"], "the one not queued waits ahead of those held since")
    }

    @Test func theBoundCountsThoseInFlight() {
        let held = HeldRevocations()
        for n in 0..<HeldRevocations.capacity { #expect(held.hold(Self.held(n))) }
        let taken = held.takeAll()
        #expect(!held.hold(Self.held(-1)), "full while the attempt runs")
        held.settle(taken: taken.count, notQueued: [])
        #expect(held.count == 0)
        #expect(held.hold(Self.held(-1)))
    }
}
