/// Where the Store's rows live: SQLite (the embedded default) or PostgreSQL (several
/// instances). Every call runs `body` as one transaction on a connection of the engine, on a
/// thread that may block (never an I/O loop's).
protocol StoreEngine: Sendable {
    var dialect: SQLDialect { get }
    /// How this engine keeps sessions in memory (asked once, by the Store's `SessionStore`).
    var sessionCaching: any SessionCaching { get }
    /// One write transaction; returns once committed.
    @discardableResult
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T
    /// A read of committed data.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T
    /// A read that blocks the calling thread: for start-up and the command line only.
    func readBlocking<T>(_ body: (any SQLConnection) throws -> T) throws -> T
    /// One write transaction that blocks the calling thread until committed: for start-up and
    /// the command line only.
    func writeBlocking<T>(_ body: (any SQLConnection) throws -> T) throws -> T
    func ping() async -> Bool
    /// Gives the space of deleted rows back to the file system where the engine does not do
    /// it by itself; returns the pages (or rows) that were free.
    func reclaimSpace() async throws -> Int
    func close()
}
