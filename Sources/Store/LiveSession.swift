/// A session and its user as authentication found them, shared by reference: a cache hands the
/// same object to every request that presents the token, so a hit copies no field (and bumps no
/// reference count of each of them, which two threads would fight over).
public final class LiveSession: Sendable {
    public let session: SessionRecord
    public let user: UserRecord

    init(session: SessionRecord, user: UserRecord) {
        self.session = session
        self.user = user
    }
}
