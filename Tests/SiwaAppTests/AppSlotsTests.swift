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
        let first = try await slots.take()
        let second = try await slots.take()
        #expect(slots.free == 0)
        let third = Task { try await slots.take() }
        // Queued, so not granted.
        #expect(try await eventually { slots.waiting == 1 })
        first.release()
        let slot = try await third.value
        // Handed over, not freed: the count stays at zero while the third holds it.
        #expect(slots.free == 0 && slots.waiting == 0)
        slot.release()
        second.release()
        #expect(slots.free == 2)
    }

    @Test func aTakerCancelledWhileItWaitsLeavesTheQueueAtOnce() async throws {
        let slots = AppSlots(count: 1)
        let holder = try await slots.take()
        let waiter = Task { try await slots.take() }
        #expect(try await eventually { slots.waiting == 1 })
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(slots.waiting == 0)
        // The slot given back goes to nobody who left: it is free again.
        holder.release()
        #expect(slots.free == 1)
    }

    @Test func aTakerCancelledBeforeItQueuesGetsNoSlot() async throws {
        let slots = AppSlots(count: 1)
        let taker = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await slots.take()
        }
        await #expect(throws: CancellationError.self) { try await taker.value }
        #expect(slots.free == 1 && slots.waiting == 0)
    }

    @Test func waitersAreServedInTheOrderTheyCame() async throws {
        let slots = AppSlots(count: 1)
        let holder = try await slots.take()
        var waiters: [Task<AppSlot, any Error>] = []
        for number in 0..<3 {
            waiters.append(Task { try await slots.take() })
            #expect(try await eventually { slots.waiting == number + 1 })
        }
        // Each given-back slot goes to the longest waiter while the later ones keep waiting.
        var slot = holder
        for (index, waiter) in waiters.enumerated() {
            slot.release()
            slot = try await waiter.value
            #expect(slots.waiting == waiters.count - 1 - index)
        }
        slot.release()
        #expect(slots.free == 1)
    }

    @Test func aSlotComesBackOnceWhetherReleasedTwiceOrDropped() async throws {
        let slots = AppSlots(count: 2)
        let slot = try await slots.take()
        slot.release()
        slot.release()
        #expect(slots.free == 2)
        do {
            _ = try await slots.take()
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
