import SQLRow

/// The console's numbers (docs/guides/operating.md "Console"): how many users, and how many
/// can sign in which way.
public struct UserCounts: Sendable, Equatable {
    public var all: Int
    public var withAppleID: Int
    public var withPassword: Int
}

/// What Apple knows of a user, as siwa-server last heard it: the console's "Apple's view".
public struct AppleView: Sendable, Equatable {
    /// The Services ID or bundle ID the user's tokens were issued to; nil without tokens.
    public var clientID: String?
    public var hasRefreshToken: Bool
    /// When Apple last accepted the refresh token, and when it is next asked (docs/guides:
    /// refresh re-validation).
    public var validatedAt: Int64?
    public var validationDueAt: Int64?
    /// Tokens of this user queued for `auth/revoke`, and the last error Apple's side gave.
    public var pendingRevocations: Int
    public var lastRevocationError: String?
}

extension Store {
    /// Three counts in one read. `COUNT(apple_sub)` counts the users with an Apple ID (the
    /// column is null for password-only users).
    public func userCounts() async throws -> UserCounts {
        try await engine.read { connection in
            let row = try connection.queryOne(
                "SELECT COUNT(*) AS users, COUNT(apple_sub) AS apple, (SELECT COUNT(*) FROM password_credentials) AS passwords FROM users")
            return UserCounts(
                all: try row?.int("users") ?? 0, withAppleID: try row?.int("apple") ?? 0, withPassword: try row?.int("passwords") ?? 0)
        }
    }

    public func appleView(userID: String) async throws -> AppleView {
        try await engine.read { connection in
            let tokens = try connection.queryOne(
                "SELECT client_id, refresh_token IS NOT NULL AS has_refresh, validated_at, validation_due_at FROM apple_tokens WHERE user_id = ?",
                [.text(userID)])
            let revocations = try connection.query(
                "SELECT last_error FROM revocations WHERE user_id = ? ORDER BY id", [.text(userID)])
            return AppleView(
                clientID: try tokens?.string("client_id"), hasRefreshToken: try tokens?.bool("has_refresh") ?? false,
                validatedAt: try tokens?.optionalInt64("validated_at"), validationDueAt: try tokens?.optionalInt64("validation_due_at"),
                pendingRevocations: revocations.count,
                lastRevocationError: try revocations.last?.optionalString("last_error"))
        }
    }
}

extension UserStore {
    /// The console's search (`/console/users?q=`): users whose id, Apple `sub`, `external_id`
    /// or email (either the Apple email or the password account's, compared without case) is
    /// exactly `query`, in id order after `afterID`. Exact matches keep every branch on an
    /// index but the case-folded email, which is one pass over the table.
    public func search(_ query: String, after afterID: String?, limit: Int) async throws -> [UserRecord] {
        precondition((1...Self.maximumPage + 1).contains(limit), "a page holds 1 to \(Self.maximumPage) users, and one more to look ahead")
        let folded = query.lowercased()
        var sql = """
            SELECT \(UserRecord.columns) FROM users u
            WHERE (u.id = ? OR u.apple_sub = ? OR u.external_id = ? OR lower(u.email) = ?
                OR u.id IN (SELECT p.user_id FROM password_credentials p WHERE lower(p.email) = ?))
            """
        var parameters: [SQLValue] = [.text(query), .text(query), .text(query), .text(folded), .text(folded)]
        if let afterID {
            sql += " AND u.id > ?"
            parameters.append(.text(afterID))
        }
        sql += " ORDER BY u.id LIMIT ?"
        parameters.append(.integer(Int64(limit)))
        return try await engine.read { [sql, parameters] connection in try connection.query(sql, parameters).map(UserRecord.init) }
    }
}
