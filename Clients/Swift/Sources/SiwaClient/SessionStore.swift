/// Where the client keeps its state between launches: the Keychain on Apple platforms
/// (`KeychainSessionStore`), a file or memory elsewhere and in tests.
public protocol SessionStore: Sendable {
    /// The saved state, or an empty one.
    func load() async throws -> SiwaClientState
    /// Replaces the saved state; an empty state removes it.
    func save(_ state: SiwaClientState) async throws
}
