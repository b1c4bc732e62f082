import Foundation
import Synchronization

/// Runs `body` on a new thread (not the cooperative pool, which a blocking body could starve).
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Releases its runners together, so two racers really do race.
final class StartLine: Sendable {
    private let arrived = Mutex(0)
    private let runners: Int

    init(runners: Int) {
        self.runners = runners
    }

    func wait() {
        arrived.withLock { $0 += 1 }
        while arrived.withLock({ $0 }) < runners {
            sched_yield()
        }
    }
}
