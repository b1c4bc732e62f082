import Glibc
import Testing
@testable import HTTPServer

/// The lower-priority threads that run requests with large bodies.
@Suite struct BackgroundExecutorTests {
    private static func niceValue() -> Int32 {
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    @Test func tasksRunThereAtALowerPriorityThanTheCaller() async throws {
        let executor = try BackgroundExecutor(threads: 2, name: "test-bg")
        let callerNice = Self.niceValue()
        let (nice, thread) = await Task(executorPreference: executor) { (Self.niceValue(), pthread_self()) }.value
        #expect(nice == min(19, callerNice + BackgroundExecutor.niceIncrement))
        #expect(thread != pthread_self())
        executor.stop()
    }

    @Test func stopFinishesWhatIsQueuedAndLaterWorkStillRuns() async throws {
        let executor = try BackgroundExecutor(threads: 1, name: "test-bg")
        let tasks = (0..<50).map { index in Task(executorPreference: executor) { index * 2 } }
        executor.stop()
        var sum = 0
        for task in tasks { sum += await task.value }
        #expect(sum == (0..<50).reduce(0) { $0 + $1 * 2 })
        // After stop a task still completes, on whichever thread enqueued it.
        #expect(await Task(executorPreference: executor) { 21 * 2 }.value == 42)
    }
}
