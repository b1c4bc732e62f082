import Foundation
import Synchronization

/// Lets a test hold a handler until it says so: proves ordering without timing assumptions.
/// Handlers wait on a name; the test sees how many wait there (`waiting`) and lets them go
/// (`open`). A name stays open once opened, so a handler that arrives late does not wait.
public final class Gate: Sendable {
    public static let shared = Gate()

    private struct State {
        var opened: Set<String> = []
        var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func wait(_ name: String) async {
        await withCheckedContinuation { continuation in
            let openAlready = state.withLock { state -> Bool in
                if state.opened.contains(name) { return true }
                state.waiters[name, default: []].append(continuation)
                return false
            }
            if openAlready { continuation.resume() }
        }
    }

    /// How many handlers wait at `name` now: a test polls it to know they have arrived.
    public func waiting(_ name: String) -> Int {
        state.withLock { $0.waiters[name]?.count ?? 0 }
    }

    public func open(_ name: String) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.opened.insert(name)
            return state.waiters.removeValue(forKey: name) ?? []
        }
        waiters.forEach { $0.resume() }
    }

    /// A name no other test uses.
    public static func uniqueName() -> String { UUID().uuidString }
}
