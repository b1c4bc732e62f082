import Foundation
import Synchronization

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
