import Logging
import Synchronization

/// The work of a request whose answer must not depend on it. A reset request looks its email
/// up, issues a code and queues the message: done before the answer, a known email took longer
/// than an unknown one (docs/guides/passwords-and-email.md wants them answered alike). So the route checks its input,
/// hands that work here and answers at once; the work runs after the answer, a few jobs at a
/// time.
///
/// Bounded: at most `capacity` jobs wait; one more is dropped and counted
/// (`siwa_email_requests_total{outcome="dropped"}`), never waited for, so a flood of requests
/// neither blocks an answer nor grows memory. At a graceful stop `drain` runs what waits, within
/// a bound.
package final class EmailRequestQueue: Sendable {
    package typealias Job = @Sendable () async throws -> Void

    /// Jobs waiting at most: a few seconds of work at the database's pace.
    package static let defaultCapacity = 1_024
    /// Jobs running at once.
    package static let defaultConcurrency = 4
    /// How long a graceful stop waits for the jobs still queued.
    package static let drainBound: Duration = .seconds(5)

    private struct Item: Sendable {
        /// What the job does, for the log (`password_reset`): never request data.
        package let kind: String
        package let job: Job

        package init(kind: String, job: @escaping Job) {
            self.kind = kind
            self.job = job
        }
    }

    private struct State {
        package var capacity: Int
        package var queued = 0
        package var running = 0
        package var accepting = true
        /// The drain's bound passed: what is still queued is dropped, nothing more starts.
        package var abandoned = false
        package var worker: Task<Void, Never>?
        package var hold: (@Sendable () async -> Void)?
        package var idleWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        package var nextWaiter = 0

        package var outstanding: Int { queued + running }

        /// The waiters to resume when nothing is left.
        package mutating func takeWaitersIfIdle() -> [CheckedContinuation<Void, Never>] {
            guard outstanding == 0 else { return [] }
            defer { idleWaiters = [:] }
            return Array(idleWaiters.values)
        }
    }

    private let state: Mutex<State>
    private let items: AsyncStream<Item>
    private let input: AsyncStream<Item>.Continuation
    private let concurrency: Int
    /// `done`, `failed` (the work threw: the database away) or `dropped` (the queue was full,
    /// or stopping).
    package let outcomes: LabeledCounter
    private let logger: Logger

    package init(capacity: Int = defaultCapacity, concurrency: Int = defaultConcurrency, outcomes: LabeledCounter, logger: Logger) {
        state = Mutex(State(capacity: capacity))
        // Unbounded as a stream; `submit` keeps it within `capacity`.
        (items, input) = AsyncStream.makeStream(of: Item.self)
        self.concurrency = max(1, concurrency)
        self.outcomes = outcomes
        self.logger = logger
    }

    /// Starts running jobs (once).
    package func start() {
        state.withLock { state in
            guard state.worker == nil, state.accepting else { return }
            state.worker = Task { await self.work() }
        }
    }

    /// Queues `job` without waiting; false when it was dropped (the queue full, or stopping).
    @discardableResult
    package func submit(_ kind: String, _ job: @escaping Job) -> Bool {
        let admitted = state.withLock { state -> Bool in
            guard state.accepting, state.queued < state.capacity else { return false }
            state.queued += 1
            return true
        }
        guard admitted else {
            outcomes.increment("dropped")
            return false
        }
        if case .terminated = input.yield(Item(kind: kind, job: job)) {
            // `drain` finished the stream between the count and the yield.
            let waiters = state.withLock { state in
                state.queued -= 1
                return state.takeWaitersIfIdle()
            }
            waiters.forEach { $0.resume() }
            outcomes.increment("dropped")
            return false
        }
        return true
    }

    /// Jobs queued or running now.
    package var outstanding: Int { state.withLock { $0.outstanding } }

    /// False once `drain` began.
    package var isAccepting: Bool { state.withLock { $0.accepting } }

    /// Returns once nothing is queued or running, or when the calling task is cancelled.
    package func idle() async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.outstanding == 0 || Task.isCancelled { return true }
                    state.idleWaiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.idleWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Graceful stop: takes no more jobs and runs those queued, for at most `bound`; what is
    /// still queued then is dropped (counted and logged). Returns how many were dropped.
    @discardableResult
    package func drain(within bound: Duration = drainBound) async -> Int {
        let worker = state.withLock { state -> Task<Void, Never>? in
            state.accepting = false
            return state.worker
        }
        input.finish()
        var drained = false
        if worker != nil {
            drained = await withTaskGroup(of: Bool.self) { group in
                group.addTask { await self.idle(); return true }
                group.addTask { try? await Task.sleep(for: bound); return false }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        }
        let (dropped, waiters) = state.withLock { state in
            let dropped = drained ? 0 : state.queued
            state.abandoned = !drained
            state.queued -= dropped
            return (dropped, state.takeWaitersIfIdle())
        }
        waiters.forEach { $0.resume() }
        // A job still running at the bound is left to finish or fail on its own; the worker
        // starts no other.
        worker?.cancel()
        if dropped > 0 {
            for _ in 0..<dropped { outcomes.increment("dropped") }
            logger.error("email requests still queued at the stop were dropped", metadata: [
                "count": .stringConvertible(dropped),
            ])
        }
        return dropped
    }

    /// Test seam: each job first awaits `hold` (a test's gate), so a test can see the answer
    /// come before the work.
    package func holdEachJob(_ hold: @escaping @Sendable () async -> Void) {
        state.withLock { $0.hold = hold }
    }

    /// Test seam: a smaller bound, so a test fills the queue with a few requests.
    package func setCapacity(_ capacity: Int) {
        state.withLock { $0.capacity = capacity }
    }

    // MARK: - The worker

    private func work() async {
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for await item in items {
                if running == concurrency {
                    await group.next()
                    running -= 1
                }
                // A finished stream still hands out what it holds: after the drain's bound,
                // those were counted as dropped and none starts.
                let starts = state.withLock { state -> Bool in
                    guard !state.abandoned else { return false }
                    state.queued -= 1
                    state.running += 1
                    return true
                }
                guard starts else { break }
                group.addTask { await self.perform(item) }
                running += 1
            }
        }
    }

    private func perform(_ item: Item) async {
        if let hold = state.withLock({ $0.hold }) { await hold() }
        do {
            try await item.job()
            outcomes.increment("done")
        } catch {
            // The person already has the answer; asking again is their retry.
            outcomes.increment("failed")
            logger.warning("an email request failed after its answer", metadata: ["kind": .string(item.kind), "error": "\(error)"])
        }
        let waiters = state.withLock { state in
            state.running -= 1
            return state.takeWaitersIfIdle()
        }
        waiters.forEach { $0.resume() }
    }
}
