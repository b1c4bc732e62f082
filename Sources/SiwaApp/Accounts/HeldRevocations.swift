import Synchronization
import WireFormat

/// Apple's tokens that must be revoked but that neither the durable revocation queue (it lives
/// in the database, which was unavailable) nor Apple (unreachable at that moment) could take:
/// held in memory until the database takes them into the queue (`Revoker.queueHeld`). Bounded,
/// so an outage that lasts cannot grow it without end; what it holds is lost if the process
/// ends before the database returns, and the stop says how many.
final class HeldRevocations: Sendable {
    struct Held: Sendable {
        let clientID: String
        let token: String
        let kind: TokenKind
        /// When the sign-in failed: the queue row's creation time.
        let since: Int64
    }

    /// Far more than an outage's failed sign-ins with a code, and a few MiB at most.
    static let capacity = 10_000

    private let held = Mutex<[Held]>([])

    /// False when full: the token is not held.
    func hold(_ revocation: Held) -> Bool {
        held.withLock { held in
            guard held.count < Self.capacity else { return false }
            held.append(revocation)
            return true
        }
    }

    /// Everything held, which the caller queues or gives back.
    func takeAll() -> [Held] {
        held.withLock { held in
            defer { held.removeAll() }
            return held
        }
    }

    /// Revocations the queue did not take after all, ahead of those held since.
    func giveBack(_ revocations: [Held]) {
        held.withLock { $0.insert(contentsOf: revocations, at: 0) }
    }

    var count: Int { held.withLock { $0.count } }
}
