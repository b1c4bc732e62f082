import AppTestSupport
import Testing
import TestSupport

/// The test harness's bound on applications alive at once (AppSlots): a taker waits while
/// none is free, waiters are served first come first served, a slot comes back once however
/// it is given, and applications inside a test's scope share its slot.
@Suite(.timeLimit(.minutes(2)))
struct AppSlotsTests {
    @Test func aTakerWaitsWhileNoSlotIsFreeAndGetsTheFirstOneGivenBack() async throws {
        let slots = AppSlots(count: 2)
        let first = await slots.take()
        let second = await slots.take()
        #expect(slots.free == 0)
        let third = Task { await slots.take() }
        // Queued, so not granted.
        #expect(try await eventually { slots.waiting == 1 })
        first.release()
        let slot = await third.value
        // Handed over, not freed: the count stays at zero while the third holds it.
        #expect(slots.free == 0 && slots.waiting == 0)
        slot.release()
        second.release()
        #expect(slots.free == 2)
    }

    @Test func waitersAreServedInTheOrderTheyCame() async throws {
        let slots = AppSlots(count: 1)
        let holder = await slots.take()
        var waiters: [Task<AppSlot, Never>] = []
        for number in 0..<3 {
            waiters.append(Task { await slots.take() })
            #expect(try await eventually { slots.waiting == number + 1 })
        }
        // Each given-back slot goes to the longest waiter while the later ones keep waiting.
        var slot = holder
        for (index, waiter) in waiters.enumerated() {
            slot.release()
            slot = await waiter.value
            #expect(slots.waiting == waiters.count - 1 - index)
        }
        slot.release()
        #expect(slots.free == 1)
    }

    @Test func aSlotComesBackOnceWhetherReleasedTwiceOrDropped() async {
        let slots = AppSlots(count: 2)
        let slot = await slots.take()
        slot.release()
        slot.release()
        #expect(slots.free == 2)
        do {
            _ = await slots.take()
        }
        #expect(slots.free == 2)
    }

    @Test func anApplicationInsideAnothersScopeSharesItsSlot() async throws {
        #expect(!AppSlots.inScope)
        try await withApp { outer in
            #expect(outer.holdsSlot)
            #expect(AppSlots.inScope)
            try await withFixture(TestApp()) { inner in
                #expect(!inner.holdsSlot)
            }
        }
    }

    /// A test that starts applications itself (several at once, or without TestApp) holds one
    /// slot for all of them.
    @Test func withSlotHoldsOneSlotForTheApplicationsItStarts() async throws {
        try await AppSlots.withSlot {
            #expect(AppSlots.inScope)
            try await withFixture(TestApp()) { app in
                #expect(!app.holdsSlot)
            }
        }
        #expect(!AppSlots.inScope)
    }
}
