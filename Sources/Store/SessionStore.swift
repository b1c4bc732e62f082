import OpenSSLCrypto
import SQLRow
import WireFormat

/// Sessions: opaque bearer tokens whose SHA-256 is the lookup key (a stolen database file
/// yields no usable token).
public struct SessionStore: Sendable {
    let engine: any StoreEngine
    /// Internal, not private: tests wait for PostgreSQL's cache to listen.
    let caching: any SessionCaching
    /// Where ended sessions' webhook events go (`session.ended`).
    let outbox: WebhookOutbox?

    init(engine: any StoreEngine, caching: any SessionCaching, outbox: WebhookOutbox? = nil) {
        self.engine = engine
        self.caching = caching
        self.outbox = outbox
    }

    /// Token bytes before encoding: 256 bits (docs/reference/http-api.md).
    static let tokenBytes = 32

    /// The stored form of a token: SHA-256 of its decoded bytes, or nil for text that cannot
    /// be one of our tokens (so garbage never reaches the database).
    static func tokenHash(_ token: Substring) -> TokenHash? {
        guard token.utf8.count == 43 else { return nil }
        return TokenHash(token: token, decodedCount: tokenBytes)
    }

    // MARK: - Creating

    /// Creates a session for `userID` inside the caller's write transaction (sign-in creates
    /// the user and the session together), expiring absolutely at `now + ttl`.
    package static func create(
        in connection: any SQLConnection, userID: String, deviceName: String?, now: Int64, ttl: Int64
    ) throws -> NewSession {
        try create(in: connection, userID: userID, deviceName: deviceName, now: now, ttl: ttl, origin: nil, outbox: nil)
    }

    /// With `origin`, the same INSERT keeps how and from where, and `outbox` gets
    /// `session.created`.
    static func create(
        in connection: any SQLConnection, userID: String, deviceName: String?, now: Int64, ttl: Int64, origin: SessionOrigin?,
        outbox: WebhookOutbox?
    ) throws -> NewSession {
        let secret = SecureRandom.bytes(tokenBytes)
        var record = SessionRecord(
            id: RecordID.make(prefix: "ses_", orderedBy: now), userID: userID, deviceName: deviceName.flatMap { $0.isEmpty ? nil : $0 },
            createdAt: now, lastSeenAt: now, expiresAt: now + ttl
        )
        record.origin = origin
        // Deferred (on PostgreSQL it goes with the next statement or COMMIT): nothing here
        // reads its outcome, and a failure still fails the sign-in's transaction.
        try connection.runDeferred(
            """
            INSERT INTO sessions(id, user_id, token_hash, device_name, created_at, last_seen_at, expires_at, method, ip, user_agent)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(record.id), .text(userID), .blob(SHA256.hash(secret)), record.deviceName.map(SQLValue.text) ?? .null,
             .integer(now), .integer(now), .integer(record.expiresAt), origin.map { .text($0.method.rawValue) } ?? .null,
             origin?.ip.map(SQLValue.text) ?? .null, origin?.userAgent.map(SQLValue.text) ?? .null]
        )
        if let outbox, let origin { try outbox.append(.sessionCreated, .sessionCreated(record, method: origin.method), now: now, in: connection) }
        return NewSession(token: Base64.url.encode(secret), record: record)
    }

    public func create(userID: String, deviceName: String?, now: Int64, ttl: Int64) async throws -> NewSession {
        try await engine.write { try Self.create(in: $0, userID: userID, deviceName: deviceName, now: now, ttl: ttl) }
    }

    // MARK: - Authenticating

    /// The live session a token names and its user, in one read (the `token_hash` UNIQUE
    /// index, then the users primary key), or none when the cache holds it unchanged. nil for
    /// an unknown token, a session past its absolute expiry, or one unused for `idleTTL` seconds
    /// (as far as the last flushed `last_seen_at` knows; see `LastSeenBatcher`).
    nonisolated(nonsending) public func authenticate(token: String, now: Int64, idleTTL: Int64) async throws -> (SessionRecord, UserRecord)? {
        try await live(token: token[...], now: now, idleTTL: idleTTL).map { ($0.session, $0.user) }
    }

    /// As above, for a token cut from a header without copying it, and shared with the cache:
    /// what every authenticated request runs. `recentUse` tells of uses this instance has not
    /// written yet (`LastSeenBatcher.lastUse`); it is asked only when the stored time looks idle.
    nonisolated(nonsending) public func live(
        token: Substring, now: Int64, idleTTL: Int64, recentUse: (String) -> Int64? = { _ in nil }
    ) async throws -> LiveSession? {
        guard let hash = Self.tokenHash(token) else { return nil }
        switch inMemory(hash, now: now, idleTTL: idleTTL) {
        case .live(let found): return found
        case .notLive: return nil
        case .unknown: break
        }
        // Not cached, or a cached copy that looks idle, which is read again: another instance
        // may have seen the session used since this one cached it.
        guard let found = try await read(hash), found.session.expiresAt > now else { return nil }
        let idleBefore = now - idleTTL
        guard found.session.lastSeenAt > idleBefore || (recentUse(found.session.id) ?? .min) > idleBefore else { return nil }
        return found
    }

    /// What memory alone says of a token, for a request answered without waiting.
    public enum InMemory: Sendable {
        case live(LiveSession)
        /// Not a session: not one of our tokens, or past its absolute expiry.
        case notLive
        /// Only the database can say: not in memory, or idle there.
        case unknown
    }

    /// `live` from the session cache alone: what it returns when the cache answers, `.unknown`
    /// when it would read the database. Asks nothing of recent uses: a session that looks idle
    /// in memory goes to the database, as in `live`.
    public func liveInMemory(token: Substring, now: Int64, idleTTL: Int64) -> InMemory {
        guard let hash = Self.tokenHash(token) else { return .notLive }
        return inMemory(hash, now: now, idleTTL: idleTTL)
    }

    private func inMemory(_ hash: TokenHash, now: Int64, idleTTL: Int64) -> InMemory {
        guard let found = caching.lookup(hash), found.session.lastSeenAt > now - idleTTL else { return .unknown }
        return found.session.expiresAt > now ? .live(found) : .notLive
    }

    /// The user of a live session (absolute expiry only), read from the database: for a change
    /// started by that session and finished without its cookie (linking from the web flow).
    public func owner(sessionID: String, now: Int64) async throws -> String? {
        try await engine.read { connection in
            try connection.queryOne("SELECT user_id FROM sessions WHERE id = ? AND expires_at > ?", [.text(sessionID), .integer(now)])?
                .string(0)
        }
    }

    /// Sessions held in memory (tests).
    public var cachedCount: Int { caching.count }

    private func read(_ hash: TokenHash) async throws -> LiveSession? {
        try await caching.read(hash, engine: engine)
    }

    /// The session of a token's hash as the database holds it, bypassing any cache.
    static func readUncached(_ hash: TokenHash, engine: any StoreEngine) async throws -> LiveSession? {
        try await engine.read { connection in
            guard let row = try connection.queryOne(authenticateSQL, [.blob(hash.bytes)]) else { return nil }
            return LiveSession(session: try SessionRecord(row: row), user: try UserRecord(row: row))
        }
    }

    /// Expiry and idleness are checked by the caller, so a cached row serves until it changes.
    static let authenticateSQL = """
        SELECT \(SessionRecord.columns), \(UserRecord.columns)
        FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = ?
        """

    // MARK: - Listing and ending

    /// The user's sessions that have not expired (absolutely, or by idleness when `idleTTL`
    /// is given), newest first.
    public func list(userID: String, now: Int64, idleTTL: Int64? = nil) async throws -> [SessionRecord] {
        try await engine.read { connection in
            try connection.query(
                """
                SELECT \(SessionRecord.columns), \(SessionOrigin.columns) FROM sessions s
                WHERE s.user_id = ? AND s.expires_at > ? AND s.last_seen_at > ?
                ORDER BY s.created_at DESC, s.id
                """,
                [.text(userID), .integer(now), .integer(idleTTL.map { now - $0 } ?? Int64.min)]
            ).map { row in
                var record = try SessionRecord(row: row)
                record.origin = try SessionOrigin(row: row)
                return record
            }
        }
    }

    /// Ends session `id` only if it belongs to `userID`. false when it is unknown, already
    /// ended, or another user's (all 404, so ids of others' sessions cannot be probed).
    package static func end(id: String, userID: String, in connection: any SQLConnection) throws -> Bool {
        try connection.run("DELETE FROM sessions WHERE id = ? AND user_id = ?", [.text(id), .text(userID)]) > 0
    }

    public func end(id: String, userID: String) async throws -> Bool {
        let ended = try await engine.write { try Self.end(id: id, userID: userID, in: $0) }
        caching.forget(sessionID: id)
        return ended
    }

    /// Drops the cached sessions of a user whose sessions just ended, in this process at once.
    /// On SQLite the row versions already refuse them (this frees the memory); on PostgreSQL
    /// the database's NOTIFY reaches this instance's listener a moment later, and until then
    /// the entries would still be served here.
    func dropCached(userID: String) {
        caching.dropCached(userID: userID)
    }

    /// Frees the memory of cached sessions that ended some other way (Housekeeping).
    @discardableResult
    public func sweepCache() -> Int {
        caching.sweep()
    }

    /// Ends every session of the user; returns how many there were.
    @discardableResult
    package static func endAll(userID: String, in connection: any SQLConnection) throws -> Int {
        try connection.run("DELETE FROM sessions WHERE user_id = ?", [.text(userID)])
    }

    @discardableResult
    public func endAll(userID: String) async throws -> Int {
        try await engine.write { try Self.endAll(userID: userID, in: $0) }
    }

    /// Sessions that have neither expired nor gone idle (`siwa_sessions_active`).
    public func countLive(now: Int64, idleTTL: Int64) async throws -> Int {
        try await engine.read { connection in
            try connection.queryOne(
                "SELECT COUNT(*) FROM sessions WHERE expires_at > ? AND last_seen_at > ?", [.integer(now), .integer(now - idleTTL)]
            )?.int(0) ?? 0
        }
    }

    /// Ends every session of the user but `keptID` ("end other sessions"); returns how many.
    @discardableResult
    public func endAll(userID: String, except keptID: String) async throws -> Int {
        try await engine.write {
            try $0.run("DELETE FROM sessions WHERE user_id = ? AND id <> ?", [.text(userID), .text(keptID)])
        }
    }

    /// Deletes sessions past their absolute or idle expiry; returns how many.
    @discardableResult
    public func pruneExpired(now: Int64, idleTTL: Int64) async throws -> Int {
        try await engine.write { try Self.pruneExpired(in: $0, now: now, idleTTL: idleTTL) }
    }

    static func pruneExpired(in connection: any SQLConnection, now: Int64, idleTTL: Int64) throws -> Int {
        try connection.run("DELETE FROM sessions WHERE expires_at <= ? OR last_seen_at <= ?", [.integer(now), .integer(now - idleTTL)])
    }

    /// Sets `last_seen_at` for many sessions in the caller's transaction, never moving it back
    /// (touches may arrive out of order). Ended sessions are skipped.
    static func recordLastSeen(_ seen: [String: Int64], in connection: any SQLConnection) throws {
        for (id, time) in seen {
            try connection.run(
                "UPDATE sessions SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?", [.integer(time), .text(id), .integer(time)]
            )
        }
    }
}
