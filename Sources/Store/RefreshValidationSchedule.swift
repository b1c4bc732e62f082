import SQLRow

/// When each stored refresh token is next re-validated with Apple (`apple_tokens.validation_due_at`,
/// docs/reference/http-api.md "Refresh-token re-validation"). Tokens stored by a sign-in start unscheduled; the
/// validator schedules them one interval after they were stored, less up to a tenth of it at
/// random, so users who signed in together are not re-validated together.
public struct RefreshValidationSchedule: Sendable {
    /// A stored refresh token whose re-validation is due.
    public struct Due: Sendable, Equatable {
        public let userID: String
        /// Whether the user has a live session; only those are worth asking Apple about.
        public let hasLiveSession: Bool

        public init(userID: String, hasLiveSession: Bool) {
            self.userID = userID
            self.hasLiveSession = hasLiveSession
        }
    }

    private let engine: any StoreEngine

    init(engine: any StoreEngine) {
        self.engine = engine
    }

    /// Gives every unscheduled refresh token its first due time; returns how many. A read
    /// first, so an idle server does not write every tick.
    @discardableResult
    public func scheduleNew(interval: Int64) async throws -> Int {
        let pending = try await engine.read {
            try $0.queryOne("SELECT 1 FROM apple_tokens WHERE refresh_token IS NOT NULL AND validation_due_at IS NULL LIMIT 1")
        }
        guard pending != nil else { return 0 }
        let spread = max(1, interval / 10)
        return try await engine.write { connection in
            // A random offset in [0, spread): the engines spell random numbers differently.
            let offset =
                switch connection.dialect {
                case .sqlite: "abs(random() % ?)"
                case .postgres: "floor(random() * ?)::bigint"
                }
            return try connection.run(
                """
                UPDATE apple_tokens
                SET validation_due_at = COALESCE(validated_at, updated_at) + ? - \(offset)
                WHERE refresh_token IS NOT NULL AND validation_due_at IS NULL
                """,
                [.integer(interval), .integer(spread)])
        }
    }

    /// The tokens due at `now`, the longest overdue first. A session is live when it has
    /// neither expired nor been idle for `idleTTL` seconds.
    public func due(now: Int64, idleTTL: Int64, limit: Int) async throws -> [Due] {
        try await engine.read { connection in
            try connection.query(
                """
                SELECT t.user_id,
                    EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = t.user_id AND s.expires_at > ? AND s.last_seen_at > ?) AS live
                FROM apple_tokens t
                WHERE t.refresh_token IS NOT NULL AND t.validation_due_at <= ?
                ORDER BY t.validation_due_at LIMIT ?
                """,
                [.integer(now), .integer(now - idleTTL), .integer(now), .integer(Int64(limit))]
            ).map { Due(userID: try $0.string(0), hasLiveSession: try $0.bool(1)) }
        }
    }

    /// Takes the tokens due at `now` for this validator: their due time moves to `now + lease`
    /// in the same transaction, so no other instance asks Apple about them meanwhile, and an
    /// instance that dies mid-batch leaves them to another once the lease has passed.
    ///
    /// `receivingTeam` (the server's team) leaves out users on their way to it in a team
    /// transfer (docs/guides/team-transfer.md): the tokens they still hold were issued to the previous team, which
    /// Apple refuses to this one, and that refusal must not end their sessions.
    public func claimDue(now: Int64, idleTTL: Int64, limit: Int, lease: Int64, receivingTeam: String? = nil) async throws -> [Due] {
        try await engine.write { connection in
            let lock = connection.dialect == .postgres ? "FOR UPDATE SKIP LOCKED" : ""
            var parameters: [SQLValue] = [.integer(now + lease), .integer(now)]
            var arriving = ""
            if let receivingTeam {
                arriving = """
                    AND NOT EXISTS (SELECT 1 FROM team_transfers x WHERE x.user_id = a.user_id AND x.target_team = ?
                        AND x.transfer_sub IS NOT NULL AND x.imported_at IS NULL)
                    """
                parameters.append(.text(receivingTeam))
            }
            parameters.append(.integer(Int64(limit)))
            let claimed = try connection.query(
                """
                UPDATE apple_tokens SET validation_due_at = ?
                WHERE user_id IN (
                    SELECT a.user_id FROM apple_tokens a WHERE a.refresh_token IS NOT NULL AND a.validation_due_at <= ? \(arriving)
                    ORDER BY a.validation_due_at LIMIT ? \(lock))
                RETURNING user_id
                """,
                parameters
            ).map { try $0.string(0) }
            return try claimed.sorted().map { userID in
                let live = try connection.queryOne(
                    "SELECT 1 FROM sessions WHERE user_id = ? AND expires_at > ? AND last_seen_at > ? LIMIT 1",
                    [.text(userID), .integer(now), .integer(now - idleTTL)])
                return Due(userID: userID, hasLiveSession: live != nil)
            }
        }
    }

    /// Apple accepted the token at `now`; next due at `nextDueAt`.
    public func recordValidated(userID: String, now: Int64, nextDueAt: Int64) async throws {
        try await engine.write {
            _ = try $0.run(
                "UPDATE apple_tokens SET validated_at = ?, validation_due_at = ? WHERE user_id = ?",
                [.integer(now), .integer(nextDueAt), .text(userID)])
        }
    }

    /// Not checked now (no live session, or Apple did not answer); due again at `dueAt`.
    public func postpone(userIDs: [String], until dueAt: Int64) async throws {
        guard !userIDs.isEmpty else { return }
        try await engine.write { connection in
            for userID in userIDs {
                try connection.run("UPDATE apple_tokens SET validation_due_at = ? WHERE user_id = ?", [.integer(dueAt), .text(userID)])
            }
        }
    }

    /// When the user's refresh token is next due, or nil (none stored, or not yet scheduled).
    public func dueAt(userID: String) async throws -> Int64? {
        try await engine.read {
            try $0.queryOne("SELECT validation_due_at FROM apple_tokens WHERE user_id = ?", [.text(userID)])?.optionalInt64(0)
        }
    }
}
