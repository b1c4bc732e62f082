import OpenSSLCrypto
import SQLRow
import WireFormat

/// A revocation Apple has not yet accepted.
public struct PendingRevocation: Sendable, Equatable {
    public let id: Int64
    public let clientID: String
    public let token: String
    /// Apple's `token_type_hint` for it.
    public let kind: TokenKind
    public let attempts: Int
    public let createdAt: Int64

    public init(id: Int64, clientID: String, token: String, kind: TokenKind, attempts: Int, createdAt: Int64) {
        self.id = id
        self.clientID = clientID
        self.token = token
        self.kind = kind
        self.attempts = attempts
        self.createdAt = createdAt
    }
}

/// The durable revocation queue (docs/reference/http-api.md account deletion): a row is written in the same
/// transaction that deletes the account and lives until Apple accepts the revocation, across
/// crashes and restarts. Tokens are sealed with `data_key`, bound to their row's client id.
public struct RevocationQueue: Sendable {
    private let engine: any StoreEngine
    private let cipher: AESGCM

    init(engine: any StoreEngine, key: [UInt8]) throws {
        self.engine = engine
        cipher = try AESGCM(key: key)
    }

    private static func associatedData(clientID: String, kind: TokenKind) -> [UInt8] {
        Array("revocations.\(kind.rawValue)\u{0}\(clientID)".utf8)
    }

    /// Queues a revocation in the caller's transaction; first due at `firstAttemptAt`.
    @discardableResult
    package func enqueue(
        in connection: any SQLConnection, userID: String?, clientID: String, token: String, kind: TokenKind, now: Int64, firstAttemptAt: Int64
    ) throws -> Int64 {
        let sealed = try cipher.seal(Array(token.utf8), associatedData: Self.associatedData(clientID: clientID, kind: kind))
        let row = try connection.queryOne(
            """
            INSERT INTO revocations(user_id, client_id, token, token_kind, attempts, next_attempt_at, created_at)
            VALUES (?, ?, ?, ?, 0, ?, ?) RETURNING id
            """,
            [userID.map(SQLValue.text) ?? .null, .text(clientID), .blob(sealed), .text(kind.rawValue), .integer(firstAttemptAt), .integer(now)])
        return try row?.int64(0) ?? 0
    }

    /// Revocations due at `now`, oldest first. A row that no longer opens (another key) is
    /// skipped, not dropped: revocation never gives up.
    public func due(now: Int64, limit: Int = 32) async throws -> [PendingRevocation] {
        let rows = try await engine.read {
            try $0.query(
                "SELECT id, client_id, token, token_kind, attempts, created_at FROM revocations WHERE next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?",
                [.integer(now), .integer(Int64(limit))])
        }
        return pending(rows)
    }

    /// Takes the revocations due at `now` for this worker: each row's next attempt moves to
    /// `now + lease` in the same statement, so no other instance takes it meanwhile, and if
    /// this one dies mid-attempt another takes the row once the lease has passed (docs/guides/postgresql.md).
    /// On PostgreSQL, `SKIP LOCKED` lets instances that claim at once take disjoint rows.
    public func claimDue(now: Int64, lease: Int64, limit: Int = 32) async throws -> [PendingRevocation] {
        let rows = try await engine.write { connection in
            let lock = connection.dialect == .postgres ? "FOR UPDATE SKIP LOCKED" : ""
            return try connection.query(
                """
                UPDATE revocations SET next_attempt_at = ?
                WHERE id IN (
                    SELECT id FROM revocations WHERE next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ? \(lock))
                RETURNING id, client_id, token, token_kind, attempts, created_at
                """,
                [.integer(now + lease), .integer(now), .integer(Int64(limit))])
        }
        return pending(rows).sorted { $0.createdAt < $1.createdAt }
    }

    private func pending(_ rows: [SQLRow]) -> [PendingRevocation] {
        rows.compactMap { row in
            // The schema allows only the two kinds, so `kind` is never nil for a row written here.
            guard let clientID = try? row.string("client_id"), let kind = (try? row.string("token_kind")).flatMap(TokenKind.init),
                  let sealed = try? row.blob("token"),
                  let token = try? cipher.open(sealed, associatedData: Self.associatedData(clientID: clientID, kind: kind)),
                  let id = try? row.int64("id"), let attempts = try? row.int("attempts"), let createdAt = try? row.int64("created_at")
            else { return nil }
            return PendingRevocation(
                id: id, clientID: clientID, token: String(decoding: token, as: UTF8.self), kind: kind, attempts: attempts,
                createdAt: createdAt)
        }
    }

    /// Apple accepted it: the row goes.
    public func complete(id: Int64) async throws {
        try await engine.write { _ = try $0.run("DELETE FROM revocations WHERE id = ?", [.integer(id)]) }
    }

    public func retry(id: Int64, attempts: Int, nextAttemptAt: Int64, error: String) async throws {
        try await engine.write {
            _ = try $0.run(
                "UPDATE revocations SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?",
                [.integer(Int64(attempts)), .integer(nextAttemptAt), .text(String(error.prefix(200))), .integer(id)])
        }
    }

    /// Queue depth and the creation time of the oldest row, for the metrics.
    public func depth() async throws -> (count: Int, oldestCreatedAt: Int64?) {
        try await engine.read { connection in
            let row = try connection.queryOne("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM revocations")
            return (try row?.int("n") ?? 0, try row?.optionalInt64("oldest"))
        }
    }
}
