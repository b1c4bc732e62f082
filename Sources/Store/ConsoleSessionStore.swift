import OpenSSLCrypto
import SQLRow
import WireFormat

/// The operators' console sessions (docs/guides/operating.md "Console"): a sign-in with the admin
/// token makes one, held by the `siwa_console` cookie for twelve hours. Only the SHA-256 of the
/// cookie's value is stored, so a copy of the database signs no one in; being rows, they hold
/// on every instance behind a load balancer and a sign-out ends them everywhere.
public struct ConsoleSessionStore: Sendable {
    public static let lifetime: Int64 = 12 * 3_600

    private let engine: any StoreEngine

    init(engine: any StoreEngine) {
        self.engine = engine
    }

    /// A new session: its cookie value (256 random bits, base64url) and when it ends.
    public struct Started: Sendable {
        public let token: String
        public let expiresAt: Int64
    }

    /// A new session, and its `admin.signed_in` event in the same transaction.
    public func start(now: Int64, audit: AuditContext) async throws -> Started {
        let started = Started(token: Base64.url.encode(SecureRandom.bytes(32)), expiresAt: now + Self.lifetime)
        try await engine.write { connection in
            _ = try connection.run(
                "INSERT INTO console_sessions(token_hash, created_at, expires_at) VALUES (?, ?, ?)",
                [.blob(Self.hash(started.token)), .integer(now), .integer(started.expiresAt)])
            try AuditTrail.record(.adminSignedIn, userID: nil, context: audit.acting(as: .admin), now: now, in: connection)
        }
        return started
    }

    /// The stored hash of a live session's cookie, or nil (unknown, ended or over). The hash is
    /// what the console binds its forms' CSRF tokens to.
    public func live(token: String, now: Int64) async throws -> [UInt8]? {
        guard Self.isWellFormed(token) else { return nil }
        let hash = Self.hash(token)
        let row = try await engine.read { connection in
            try connection.queryOne("SELECT expires_at FROM console_sessions WHERE token_hash = ?", [.blob(hash)])
        }
        guard let row, try row.int64("expires_at") > now else { return nil }
        return hash
    }

    /// Ends the session (a sign-out); true when there was one.
    @discardableResult
    public func end(token: String) async throws -> Bool {
        guard Self.isWellFormed(token) else { return false }
        let hash = Self.hash(token)
        return try await engine.write { connection in
            try connection.run("DELETE FROM console_sessions WHERE token_hash = ?", [.blob(hash)]) > 0
        }
    }

    /// Deletes sessions whose twelve hours are over (housekeeping's pass); returns how many.
    static func prune(in connection: any SQLConnection, now: Int64) throws -> Int {
        try connection.run("DELETE FROM console_sessions WHERE expires_at <= ?", [.integer(now)])
    }

    /// Our tokens are 43 base64url characters; anything else is refused before any hashing or
    /// query, so a hostile cookie costs nothing.
    private static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43 && Base64.url.decode(token)?.count == 32
    }

    private static func hash(_ token: String) -> [UInt8] {
        SHA256.hash(Array(token.utf8))
    }
}
