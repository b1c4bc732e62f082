import Glibc
import OpenSSLCrypto
import SQLRow

/// The delivery side that the webhook and mail outboxes share: rows wait in their table,
/// appended by the changes that cause them, until they are delivered (deleted at once) or their
/// retention has passed (failed, until an operator queues them again).
///
/// A claim leases its rows (their next attempt moves past the lease in the claim's statement),
/// so no other worker takes them meanwhile and one that dies mid-attempt leaves them to another
/// once the lease has passed; on PostgreSQL `SKIP LOCKED` lets instances that claim at once take
/// disjoint rows. With `orderedPerUser`, only a user's oldest row that has not failed can be
/// claimed.
struct OutboxQueue: Sendable {
    let engine: any StoreEngine
    let table: OutboxTable
    /// Opens sealed bodies; nil for the operators' commands, which read none.
    let cipher: AESGCM?

    static let unopenedError = "the body is sealed and does not open with this data_key"

    /// Due and not failed (and, when ordered per user, no older row of the user still to
    /// deliver); `?` is now, the rows are `e`.
    private var claimable: String {
        let due = "e.failed_at IS NULL AND e.next_attempt_at <= ?"
        guard table.orderedPerUser else { return due }
        return due + """

                AND NOT EXISTS (SELECT 1 FROM \(table.name) p WHERE p.user_id = e.user_id AND p.seq < e.seq AND p.failed_at IS NULL)
            """
    }

    /// Whether a claim at `now` would take a row: a read, so an idle worker polls without writing.
    func hasDue(now: Int64) async throws -> Bool {
        let sql = "SELECT 1 FROM \(table.name) e WHERE \(claimable) LIMIT 1"
        return try await engine.read { try $0.queryOne(sql, [.integer(now)]) != nil }
    }

    /// Takes up to `limit` due rows for this worker, leased until `now + lease`, oldest first by
    /// due time (the table's `_due` index order, so a long queue is not sorted on every claim);
    /// returned in outbox order, each made by `decode` from its row and its opened body. A
    /// sealed body that does not open (another `data_key`) could never be sent: it is failed in
    /// the claim's own transaction, and the listing says why.
    func claimDue<T: Sendable>(
        now: Int64, lease: Int64, limit: Int, columns: String, decode: @escaping @Sendable (SQLRow, _ body: String) throws -> T
    ) async throws -> [T] {
        guard limit > 0 else { return [] }
        let (table, cipher, claimable) = (self.table, self.cipher, self.claimable)
        return try await engine.write { connection in
            let lock = connection.dialect == .postgres ? "FOR UPDATE SKIP LOCKED" : ""
            let rows = try connection.query(
                """
                UPDATE \(table.name) SET next_attempt_at = ?
                WHERE seq IN (
                    SELECT e.seq FROM \(table.name) e WHERE \(claimable)
                    ORDER BY e.next_attempt_at, e.seq LIMIT ? \(lock))
                RETURNING seq, id, body, \(columns)
                """,
                [.integer(now + lease), .integer(now), .integer(Int64(limit))])
            var claimed: [(seq: Int64, item: T)] = []
            for row in rows {
                let id = try row.string("id")
                guard let body = OutboxBodySeal.open(try row.string("body"), id: id, table: table, with: cipher) else {
                    try connection.run(
                        "UPDATE \(table.name) SET attempts = attempts + 1, last_error = ?, failed_at = ? WHERE id = ?",
                        [.text(Self.unopenedError), .integer(now), .text(id)])
                    continue
                }
                claimed.append((try row.int64("seq"), try decode(row, body)))
            }
            return claimed.sorted { $0.seq < $1.seq }.map(\.item)
        }
    }

    /// Delivered: the row goes (nothing reads it afterwards, and it holds the user's email).
    func markDelivered(id: String) async throws {
        let sql = "DELETE FROM \(table.name) WHERE id = ?"
        try await engine.write { _ = try $0.run(sql, [.text(id)]) }
    }

    /// An attempt of the row `id`, created at `createdAt`, failed with `error` (never a body or
    /// a secret; at most 200 characters are kept). Within `retention` of its creation it is
    /// tried again after `retryDelay`, but no later than the end of its retention, so its last
    /// attempt falls there; after that, or at once when `permanent`, it is failed.
    func recordFailure(
        id: String, createdAt: Int64, error: String, now: Int64, retryDelay: Int64, retention: Int64, permanent: Bool = false
    ) async throws -> OutboxFailureOutcome {
        let deadline = createdAt + retention
        let outcome: OutboxFailureOutcome = permanent || now >= deadline ? .failed : .retrying(at: min(now + retryDelay, deadline))
        let nextAttemptAt: Int64
        let failedAt: SQLValue
        switch outcome {
        case .retrying(let at): (nextAttemptAt, failedAt) = (at, .null)
        case .failed: (nextAttemptAt, failedAt) = (now, .integer(now))
        }
        let sql = "UPDATE \(table.name) SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, failed_at = ? WHERE id = ? AND failed_at IS NULL"
        try await engine.write {
            _ = try $0.run(sql, [.text(String(error.prefix(200))), .integer(nextAttemptAt), failedAt, .text(id)])
        }
        return outcome
    }

    /// Failed rows, oldest first, each made by `decode`.
    func failed<T: Sendable>(limit: Int, columns: String, decode: @escaping @Sendable (SQLRow) throws -> T) async throws -> [T] {
        let sql = "SELECT \(columns) FROM \(table.name) WHERE failed_at IS NOT NULL ORDER BY seq LIMIT ?"
        return try await engine.read { connection in
            try connection.query(sql, [.integer(Int64(limit))]).map(decode)
        }
    }

    /// Queues a failed row again, due at `now`, its attempts counted from zero; false when no
    /// failed row has that id. Its retention still counts from its creation, so it has one more
    /// attempt, and is failed again if that fails too.
    func requeue(id: String, now: Int64) async throws -> Bool {
        let sql = "UPDATE \(table.name) SET failed_at = NULL, attempts = 0, next_attempt_at = ? WHERE id = ? AND failed_at IS NOT NULL"
        return try await engine.write { try $0.run(sql, [.integer(now), .text(id)]) == 1 }
    }

    /// Queues every failed row again (see `requeue(id:now:)`); returns how many.
    func requeueAll(now: Int64) async throws -> Int {
        let sql = "UPDATE \(table.name) SET failed_at = NULL, attempts = 0, next_attempt_at = ? WHERE failed_at IS NOT NULL"
        return try await engine.write { try $0.run(sql, [.integer(now)]) }
    }

    /// Rows waiting for delivery (failed ones are not) and the creation time of the oldest.
    func depth() async throws -> (count: Int, oldestCreatedAt: Int64?) {
        let sql = "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM \(table.name) WHERE failed_at IS NULL"
        return try await engine.read { connection in
            let row = try connection.queryOne(sql)
            return (try row?.int("n") ?? 0, try row?.optionalInt64("oldest"))
        }
    }

    /// The engine of the database at `location` alone, for the operators' commands: the
    /// database must exist (a SQLite path names no new file); its schema is brought up to date
    /// as any start would. Closed when `body` returns.
    static func withEngine<T>(at location: String, applicationName: String, _ body: (any StoreEngine) async throws -> T) async throws -> T {
        let engine: any StoreEngine
        if Store.isPostgres(location) {
            engine = try PostgresEngine.open(location, applicationName: applicationName)
        } else {
            guard access(location, F_OK) == 0 else { throw MissingDatabase(path: location) }
            engine = try SQLiteEngine.open(path: location, readers: 1)
        }
        defer { engine.close() }
        return try await body(engine)
    }
}
