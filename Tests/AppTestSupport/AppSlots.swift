import Foundation
import Synchronization

/// How many applications the test process runs at once. Swift Testing starts every test at once;
/// a unit test costs a few microseconds, but an application brings event-loop threads, a
/// simulator, a database, a webhook deliverer, and its outbound calls have real deadlines. Two
/// cores shared by hundreds of those starve each one past the deadlines it was given, so a
/// test fails for the machine, not for the code. The bound sits here, on the expensive thing,
/// not on every test: a `TestApp` waits for a slot (first come, first served) before it starts
/// anything, and gives it back when it stops. `TEST_APPS` sets the count (default 12).
///
/// A test that runs several applications at once takes one slot for all of them: inside a
/// `withFixture` (or `withApp`) scope, `inScope` is true and a further `TestApp` takes none. So a
/// test never holds a slot while it waits for another, and tests cannot deadlock on the gate.
public final class AppSlots: Sendable {
    /// True inside a fixture's scope, whose test holds a slot already.
    @TaskLocal public static var inScope = false

    public static let shared = AppSlots(
        count: ProcessInfo.processInfo.environment["TEST_APPS"].flatMap { Int($0) }.map { max(1, $0) } ?? 12)

    private struct State {
        var free: Int
        var waiting: [(ticket: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextTicket = 0
        /// Tickets cancelled before their taker queued.
        var cancelled: Set<Int> = []
    }

    private let state: Mutex<State>

    public init(count: Int) {
        state = Mutex(State(free: count))
    }

    /// A slot, once one is free; it is given back by `release()` or when it is deinitialised
    /// (an application whose start threw holds nothing). A test cancelled while it waits (its
    /// time limit passed) leaves the queue at once with `CancellationError` rather than start
    /// an application later in a task that is over.
    public func take() async throws -> AppSlot {
        let ticket = state.withLock { state in
            defer { state.nextTicket += 1 }
            return state.nextTicket
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Bool, any Error> in
                    if state.cancelled.remove(ticket) != nil { return .failure(CancellationError()) }
                    guard state.free > 0 else {
                        state.waiting.append((ticket, continuation))
                        return .success(false)
                    }
                    state.free -= 1
                    return .success(true)
                }
                switch outcome {
                case .success(true): continuation.resume()
                case .success(false): break
                case .failure(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.ticket == ticket }) else {
                    // Not queued yet (it will see this), or granted already (nothing to undo).
                    state.cancelled.insert(ticket)
                    return nil
                }
                return state.waiting.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
        return AppSlot(owner: self)
    }

    /// Runs `body` holding a slot (the scope's, inside one): for a test that starts applications
    /// without `TestApp`, several at once.
    public static func withSlot<T>(_ body: () async throws -> T) async throws -> T {
        if inScope { return try await body() }
        let slot = try await shared.take()
        defer { slot.release() }
        return try await $inScope.withValue(true) { try await body() }
    }

    /// Slots free now, and takers waiting for one (a test of the gate reads them).
    public var free: Int { state.withLock { $0.free } }
    public var waiting: Int { state.withLock { $0.waiting.count } }

    fileprivate func giveBack() {
        // A waiting test takes the slot over directly, so a newcomer cannot overtake it.
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.waiting.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}

/// One application's place among those running at once.
public final class AppSlot: Sendable {
    private let owner: AppSlots
    private let held = Mutex(true)

    fileprivate init(owner: AppSlots) {
        self.owner = owner
    }

    /// Gives the slot back; a second call does nothing.
    public func release() {
        let wasHeld = held.withLock { held in
            defer { held = false }
            return held
        }
        if wasHeld { owner.giveBack() }
    }

    deinit { release() }
}
