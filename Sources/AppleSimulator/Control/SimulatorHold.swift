import Synchronization

/// Holds the calls a fault applies to until the test opens it: a test that needs a call to be
/// in flight at a given moment waits until `holding` says so, instead of betting on a delay
/// being long enough. Only for a simulator in the test's own process (the control API has no
/// way to name one). Once open it holds nothing more.
public final class SimulatorHold: Sendable, Equatable {
    private struct State {
        var isOpen = false
        var held: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Calls waiting here now.
    public var holding: Int { state.withLock { $0.held.count } }

    /// Lets every held call go on, and later ones pass.
    public func open() {
        let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        held.forEach { $0.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let passes = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.held.append(continuation)
                return false
            }
            if passes { continuation.resume() }
        }
    }

    public static func == (lhs: SimulatorHold, rhs: SimulatorHold) -> Bool { lhs === rhs }
}
