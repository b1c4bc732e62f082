import Synchronization
import WireFormat

/// Apple's tokens that must be revoked but that neither the durable revocation queue (it lives
/// in the database, which was unavailable) nor Apple (unreachable at that moment) could take:
/// held in memory until the database takes them into the queue (`Revoker.queueHeld`). Bounded,
/// so an outage that lasts cannot grow it without end; what it holds is lost if the process
/// ends before the database returns, and the stop says how many.
package final class HeldRevocations: Sendable {
    package struct Held: Sendable {
        package let clientID: String
        package let token: String
        package let kind: TokenKind
        /// When the sign-in failed: the queue row's creation time.
        package let since: Int64

        package init(clientID: String, token: String, kind: TokenKind, since: Int64) {
            self.clientID = clientID
            self.token = token
            self.kind = kind
            self.since = since
        }
    }

    /// Far more than an outage's failed sign-ins with a code, and a few MiB at most.
    package static let capacity = 10_000

    /// Those waiting, and how many an attempt to queue has taken and not yet settled: still
    /// counted as held (for the stop's count and the bound) until they are in the queue.
    private struct State {
        package var waiting: [Held] = []
        package var taken = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// False when full: the token is not held.
    package func hold(_ revocation: Held) -> Bool {
        state.withLock { state in
            guard state.waiting.count + state.taken < Self.capacity else { return false }
            state.waiting.append(revocation)
            return true
        }
    }

    /// Everything waiting, which the caller tries to queue and then `settle`s.
    package func takeAll() -> [Held] {
        state.withLock { state in
            let all = state.waiting
            state.waiting.removeAll()
            state.taken += all.count
            return all
        }
    }

    /// The end of an attempt on `taken` revocations from `takeAll`: those the queue did not take
    /// (`notQueued`) wait again, ahead of those held since.
    package func settle(taken: Int, notQueued: [Held]) {
        state.withLock { state in
            state.taken -= taken
            state.waiting.insert(contentsOf: notQueued, at: 0)
        }
    }

    package var count: Int { state.withLock { $0.waiting.count + $0.taken } }
}
