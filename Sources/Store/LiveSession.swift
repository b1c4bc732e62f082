import Synchronization

/// A session and its user as authentication found them, shared by reference: a cache hands the
/// same object to every request that presents the token, so a hit copies no field (and bumps no
/// reference count of each of them, which two threads would fight over).
public final class LiveSession: Sendable {
    public let session: SessionRecord
    public let user: UserRecord
    /// The last second a request used it.
    private let lastUse = Atomic<Int64>(.min)
    /// `/api/me`'s body: the user never changes in this object (a change makes a new one), and
    /// a busy session is asked for it on every request.
    private let userJSON = AtomicLazyReference<Bytes>()

    private final class Bytes: Sendable {
        let value: [UInt8]
        init(_ value: [UInt8]) { self.value = value }
    }

    /// What `write` makes of `user`, made by the first request that asks and shared after it
    /// (two first requests at once may both write; one result is kept). Every caller passes
    /// the same function: it is the user's JSON, not a cache of anything else.
    public func userJSON(_ write: (UserRecord) -> [UInt8]) -> [UInt8] {
        if let made = userJSON.load() { return made.value }
        return userJSON.storeIfNil(Bytes(write(user))).value
    }

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
