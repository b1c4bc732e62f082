/// What `/metrics` shows of the PostgreSQL session cache's listener (`Store.sessionCacheListener`).
public struct SessionCacheListenerState: Sendable, Equatable {
    /// Whether it listens now, so that sessions may be served from memory.
    public let isListening: Bool
    /// How often the cache stopped serving from memory for the listener's sake.
    public let outages: SessionCacheOutages
}
