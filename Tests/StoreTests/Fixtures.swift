@testable import Store
import TestSupport

/// The engines a Store test body runs on: issue 13 asks for the same bodies against both.
typealias Engine = DatabaseEngine

/// The key that seals Apple's tokens in the tests' stores.
let testDataKey = [UInt8](repeating: 0x42, count: 32)

/// Runs `body` with the location of a fresh, empty database of `engine`: a file in a temporary
/// folder of its own, or a new database in the test process's throwaway PostgreSQL cluster, so
/// tests running in parallel never share rows.
func withLocation<T>(_ engine: Engine, _ body: (String) async throws -> T) async throws -> T {
    switch engine {
    case .sqlite:
        try await withTemporaryFolder { folder in try await body(folder + "/siwa.sqlite3") }
    case .postgres:
        try await body(try await PostgresCluster.shared().makeDatabase())
    }
}

extension PostgresCluster {
    /// A new database holding the product's schema, copied from one migrated once per process
    /// (AppTestSupport has the same for the application's tests; StoreTests does not wait for
    /// SiwaApp to build).
    func makeMigratedDatabase() async throws -> String {
        try await makeDatabase(template: "migrated") { _ = try Store.migrate(path: $0) }
    }
}

/// Runs `body` with a freshly migrated store on `engine`, opened as the server opens it; with
/// `events`, changes append their webhook events.
func withStore<T>(_ engine: Engine, events: WebhookEventRenderer? = nil, _ body: (Store) async throws -> T) async throws -> T {
    func open(_ location: String) async throws -> T {
        let store = try Store.open(location, connections: 2, events: events) { testDataKey }
        defer { store.close() }
        return try await body(store)
    }
    switch engine {
    case .sqlite: return try await withLocation(engine, open)
    case .postgres: return try await open(try await PostgresCluster.shared().makeMigratedDatabase())
    }
}

/// Creates a user for `sub` (no email, no name) and returns its id.
func makeUser(_ store: Store, sub: String = "001234.abcd.0123", now: Int64 = 1_000) async throws -> String {
    try await store.engine.write { connection in
        try UserStore.upsertOnSignIn(in: connection, identity: VerifiedIdentity(appleSub: sub), profile: nil, now: now).user.id
    }
}

extension Store {
    /// Sessions read from the database on every call: for tests of `SessionStore`'s SQL rather
    /// than of a cache in front of it.
    var uncachedSessions: SessionStore { SessionStore(engine: engine, caching: UncachedSessions()) }
}

struct CacheNotListening: Error {}

/// Returns once `store`'s session cache may serve from memory. PostgreSQL's cache serves only
/// while its listener listens, and the listener connects on a thread of its own after `open`.
func cacheReady(_ store: Store) async throws {
    guard let cache = store.sessions.caching as? NotifiedSessionCache else { return }
    guard try await eventually({ cache.isListening }) else { throw CacheNotListening() }
}

/// The webhook outbox's bodies, oldest first.
/// The outbox's bodies in order, as they will be sent (sealed ones opened).
func outboxBodies(_ store: Store) async throws -> [String] {
    try await store.engine.read { connection in
        try connection.query("SELECT id, body FROM webhook_events ORDER BY seq").map { row in
            guard let body = WebhookBodySeal.open(try row.string("body"), id: try row.string("id"), with: store.outbox.cipher) else {
                throw SealedBodyDoesNotOpen()
            }
            return body
        }
    }
}

struct SealedBodyDoesNotOpen: Error {}
