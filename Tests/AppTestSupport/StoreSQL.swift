import Store

/// SQL on the application's own store, on either engine, with the calls tests made on a
/// SQLite `Database` they opened behind the application's back (`read`, `write`,
/// `writeAndWait`, `close`): a fixture swaps the one for the other and its tests read the same.
/// `?` placeholders work on PostgreSQL too (the engine numbers them).
public struct StoreSQL: Sendable {
    public let store: Store

    public init(_ store: Store) { self.store = store }

    package func read<T>(_ body: (StoreConnection) throws -> T) throws -> T {
        try store.readBlocking { try body(StoreConnection($0)) }
    }

    package func writeAndWait<T>(_ body: (StoreConnection) throws -> T) throws -> T {
        try store.writeBlocking { try body(StoreConnection($0)) }
    }

    package func write<T: Sendable>(_ body: @escaping @Sendable (StoreConnection) throws -> T) async throws -> T {
        try await store.write { try body(StoreConnection($0)) }
    }

    /// Nothing to close: the store closes with its application.
    public func close() {}
}
