import Synchronization

/// A session and its user as authentication found them, shared by reference: a cache hands the
/// same object to every request that presents the token, so a hit copies no field (and bumps no
/// reference count of each of them, which two threads would fight over).
public final class LiveSession: Sendable {
    public let session: SessionRecord
    public let user: UserRecord
    /// The last second a request used it.
    private let lastUse = Atomic<Int64>(.min)

    /// Whether this is the first use in second `now`: the later ones need not tell the
    /// `LastSeenBatcher` again (it keeps one time per session). A plain read when it is not, so
    /// the requests of a busy session do not contend.
    public func isFirstUse(at now: Int64) -> Bool {
        guard lastUse.load(ordering: .relaxed) != now else { return false }
        return lastUse.exchange(now, ordering: .relaxed) != now
    }

    init(session: SessionRecord, user: UserRecord) {
        self.session = session
        self.user = user
    }
}
