import Glibc
import SystemThread
import Testing
import TestSupport

/// Runs `body` on a thread of its own, so blocking in it never holds a thread of Swift's
/// cooperative pool.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        do {
            try SystemThread.startDetached(name: "test") { continuation.resume(returning: body()) }
        } catch {
            continuation.resume(throwing: error)
        }
    }
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Shared state guarded by a `Condition`, as its users hold it.
final class Box: @unchecked Sendable {
    let condition = Condition()
    var value = 0
    var waiting = 0
}

@Suite struct ConditionTests {
    @Test func aSignalWakesAWaiter() async throws {
        let box = Box()
        let waiter = Task {
            try await onThread {
                box.condition.withLock {
                    box.waiting += 1
                    while box.value == 0 { box.condition.wait() }
                    return box.value
                }
            }
        }
        // Counted under the lock, which the waiter lets go only inside wait(): seen, it waits.
        #expect(try await eventually { box.condition.withLock { box.waiting } == 1 })
        box.condition.withLock {
            box.value = 7
            box.condition.signal()
        }
        #expect(try await waiter.value == 7)
    }

    @Test func aBroadcastWakesEveryWaiter() async throws {
        let box = Box()
        let waiters = (0..<3).map { _ in
            Task {
                try await onThread {
                    box.condition.withLock {
                        box.waiting += 1
                        while box.value == 0 { box.condition.wait() }
                        return box.value
                    }
                }
            }
        }
        #expect(try await eventually { box.condition.withLock { box.waiting } == 3 })
        box.condition.withLock {
            box.value = 1
            box.condition.broadcast()
        }
        for waiter in waiters { #expect(try await waiter.value == 1) }
    }

    @Test func aTimedWaitGivesUpAfterItsTime() async throws {
        let box = Box()
        let (woken, elapsed) = try await onThread {
            let start = monotonicSeconds()
            let woken = box.condition.withLock { box.condition.wait(seconds: 1) }
            return (woken, monotonicSeconds() - start)
        }
        #expect(!woken)
        #expect(elapsed >= 0.9 && elapsed < 5)
    }

    @Test func aTimedWaitReportsBeingWoken() async throws {
        let box = Box()
        let waiter = Task {
            try await onThread {
                box.condition.withLock {
                    box.value = 1
                    var woken = true
                    // Woken by the signal long before the deadline.
                    while box.value == 1, woken { woken = box.condition.wait(seconds: 30) }
                    return woken
                }
            }
        }
        #expect(try await eventually { box.condition.withLock { box.value } == 1 })
        box.condition.withLock {
            box.value = 2
            box.condition.signal()
        }
        #expect(try await waiter.value)
    }

    @Test func withLockReturnsAndRethrows() {
        struct Failure: Error {}
        let condition = Condition()
        #expect(condition.withLock { 42 } == 42)
        #expect(throws: Failure.self) { try condition.withLock { throw Failure() } }
        // The lock was released on the throw: taking it again does not deadlock.
        condition.lock()
        condition.unlock()
    }

    @Test func excludesOtherThreads() async throws {
        let box = Box()
        let workers = (0..<4).map { _ in
            Task {
                try await onThread {
                    for _ in 0..<10_000 { box.condition.withLock { box.value += 1 } }
                }
            }
        }
        for worker in workers { try await worker.value }
        #expect(box.condition.withLock { box.value } == 40_000)
    }
}
