import Synchronization

/// The bytes every connection of one server may hold for requests beyond its free allowance
/// (`HTTPLimits.bufferedBodyBudget`), shared by the loops: a connection draws what it holds and
/// gives it back, and one that cannot draw is refused rather than the process growing.
final class BodyBudget: Sendable {
    private let left: Atomic<Int>

    init(bytes: Int) {
        left = Atomic(bytes)
    }

    /// Takes `bytes`; false (and nothing taken) when not enough is left.
    func reserve(_ bytes: Int) -> Bool {
        var current = left.load(ordering: .relaxed)
        while true {
            guard current >= bytes else { return false }
            let (exchanged, original) = left.compareExchange(expected: current, desired: current - bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    func release(_ bytes: Int) {
        if bytes > 0 { left.add(bytes, ordering: .relaxed) }
    }

    var bytesLeft: Int { left.load(ordering: .relaxed) }
}
