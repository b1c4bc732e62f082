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
        let inserted = try connection.run(
            "INSERT INTO used_identity_tokens(token_hash, expires_at) VALUES (?, ?) ON CONFLICT(token_hash) DO NOTHING",
            [.blob(tokenHash), .integer(expiresAt)]
        )
        if inserted == 0 { throw ReplayError.tokenAlreadyUsed }
    }

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
        let hash = SHA256.hash(nonce)
        // Read first, then mark: a nonce the server never issued (a device's own) costs one
        // statement, and the mark, whose outcome is already known, is deferred (on PostgreSQL it
        // goes with the next statement). FOR UPDATE makes a concurrent use of the same nonce
        // wait for this transaction and then read the row as it left it: used.
        let select = connection.dialect == .postgres ? Self.selectNonceForUpdateSQL : Self.selectNonceSQL
        guard let row = try connection.queryOne(select, [.blob(hash)]) else { return .notIssued }
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
