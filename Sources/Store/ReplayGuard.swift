import OpenSSLCrypto
import SQLRow
import WireFormat

/// Why a replay check refused.
public enum ReplayError: Error, Equatable, Sendable {
    /// This identity token already made a session.
    case tokenAlreadyUsed
}

/// A nonce the server issued, to be put in the client's authorization request.
public struct IssuedNonce: Sendable, Equatable {
    public let value: String
    public let expiresAt: Int64
}

/// What consuming a nonce found.
public enum NonceUse: Sendable, Equatable {
    /// Issued by us, unused and unexpired: now used.
    case consumed
    /// Issued by us and already used once.
    case alreadyUsed
    /// Issued by us but past its 10 minutes.
    case expired
    /// Never issued by us: a nonce the client generated itself.
    case notIssued
}

/// Replay protection: identity tokens that made a session, and server-issued nonces.
public struct ReplayGuard: Sendable {
    private let engine: any StoreEngine

    /// Lifetime of a server-issued nonce (docs/reference/http-api.md: single use, 10 minutes).
    public static let nonceLifetime: Int64 = 600

    init(engine: any StoreEngine) {
        self.engine = engine
    }

    /// Marks an identity token (by its hash) as used, in the sign-in's transaction, so the
    /// mark commits with the session. Throws `ReplayError.tokenAlreadyUsed` when it was used
    /// before; the caller's transaction then rolls back. The row is kept until the token's
    /// own expiry, after which the token is refused as expired anyway.
    package static func recordUsedToken(_ tokenHash: [UInt8], expiresAt: Int64, in connection: any SQLConnection) throws {
        let mark = usedTokenMark(tokenHash, expiresAt: expiresAt)
        try checkUsedTokenMark(try connection.query(mark.sql, mark.parameters))
    }

    /// `recordUsedToken` as a statement to send with others (`SQLConnection.queries`); its rows
    /// go to `checkUsedTokenMark`. A concurrent mark of the same token makes it wait for that
    /// transaction's end: committed, this one finds the token used.
    package static func usedTokenMark(_ tokenHash: [UInt8], expiresAt: Int64) -> SQLStatement {
        SQLStatement(insertUsedTokenSQL, [.blob(tokenHash), .integer(expiresAt)])
    }

    /// The mark's row says it is new; no row, that the token was used before.
    package static func checkUsedTokenMark(_ rows: [SQLRow]) throws {
        if rows.isEmpty { throw ReplayError.tokenAlreadyUsed }
    }

    private static let insertUsedTokenSQL =
        "INSERT INTO used_identity_tokens(token_hash, expires_at) VALUES (?, ?) ON CONFLICT(token_hash) DO NOTHING RETURNING expires_at"

    /// Whether a token hash is already recorded (for checking before talking to Apple).
    public func isUsed(_ tokenHash: [UInt8]) async throws -> Bool {
        try await engine.read { connection in
            try connection.queryOne("SELECT 1 FROM used_identity_tokens WHERE token_hash = ?", [.blob(tokenHash)]) != nil
        }
    }

    /// Issues a 256-bit nonce; only its SHA-256 is stored.
    public func issueNonce(now: Int64) async throws -> IssuedNonce {
        let value = Base64.url.encode(SecureRandom.bytes(32))
        let expiresAt = now + Self.nonceLifetime
        try await engine.write { connection in
            try connection.run(
                "INSERT INTO issued_nonces(nonce_hash, expires_at) VALUES (?, ?)",
                [.blob(SHA256.hash(value)), .integer(expiresAt)]
            )
        }
        return IssuedNonce(value: value, expiresAt: expiresAt)
    }

    /// Uses up the raw `nonce` in the caller's transaction, if we issued it.
    package static func consumeNonce(_ nonce: String, now: Int64, in connection: any SQLConnection) throws -> NonceUse {
        let lookup = nonceLookup(nonce, dialect: connection.dialect)
        let row = try connection.queryOne(lookup.statement.sql, lookup.statement.parameters)
        return try consumeNonce(hash: lookup.hash, found: row, now: now, in: connection)
    }

    /// The read of `consumeNonce`, as a statement to send with others (`SQLConnection.queries`).
    /// FOR UPDATE makes a concurrent use of the same nonce wait for this transaction and then
    /// read the row as it left it: used.
    package static func nonceLookup(_ nonce: String, dialect: SQLDialect) -> (hash: [UInt8], statement: SQLStatement) {
        let hash = SHA256.hash(nonce)
        return (hash, SQLStatement(dialect == .postgres ? selectNonceForUpdateSQL : selectNonceSQL, [.blob(hash)]))
    }

    /// The rest of `consumeNonce`, given the row its lookup found. Read first, then mark: a
    /// nonce the server never issued (a device's own) costs one statement, and the mark, whose
    /// outcome is already known, is deferred (on PostgreSQL it goes with the next statement).
    package static func consumeNonce(hash: [UInt8], found row: SQLRow?, now: Int64, in connection: any SQLConnection) throws -> NonceUse {
        guard let row else { return .notIssued }
        if try row.optionalInt64("used_at") != nil { return .alreadyUsed }
        if try row.int64("expires_at") <= now { return .expired }
        try connection.runDeferred("UPDATE issued_nonces SET used_at = ? WHERE nonce_hash = ?", [.integer(now), .blob(hash)])
        return .consumed
    }

    private static let selectNonceSQL = "SELECT expires_at, used_at FROM issued_nonces WHERE nonce_hash = ?"
    private static let selectNonceForUpdateSQL = selectNonceSQL + " FOR UPDATE"

    public func consumeNonce(_ nonce: String, now: Int64) async throws -> NonceUse {
        try await engine.write { try Self.consumeNonce(nonce, now: now, in: $0) }
    }

    /// Deletes used-token marks and nonces past their expiry; returns how many rows went.
    @discardableResult
    public func prune(now: Int64) async throws -> Int {
        try await engine.write { try Self.prune(in: $0, now: now) }
    }

    static func prune(in connection: any SQLConnection, now: Int64) throws -> Int {
        try connection.run("DELETE FROM used_identity_tokens WHERE expires_at <= ?", [.integer(now)])
            + connection.run("DELETE FROM issued_nonces WHERE expires_at <= ?", [.integer(now)])
    }
}
