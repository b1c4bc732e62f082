/// Keeps the state in memory only: for tests, and for apps that sign in every launch.
public actor MemorySessionStore: SessionStore {
    private var state: SiwaClientState

    public init(_ state: SiwaClientState = SiwaClientState()) {
        self.state = state
    }

    public func load() -> SiwaClientState { state }
    public func save(_ state: SiwaClientState) { self.state = state }
}
