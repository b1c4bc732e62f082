/// Everything a `SessionStore` keeps for the client: the session, and Apple's one-time name and
/// email until the server has them. Empty means signed out with nothing pending.
public struct SiwaClientState: Sendable, Hashable, Codable {
    public var session: StoredSession?
    public var pendingProfile: PendingProfile?

    public init(session: StoredSession? = nil, pendingProfile: PendingProfile? = nil) {
        self.session = session
        self.pendingProfile = pendingProfile
    }

    public var isEmpty: Bool { session == nil && pendingProfile == nil }
}
