import SQLRow

/// Name and email held for a `sub` whose sign-in failed after Apple sent them (once).
public struct PendingProfile: Sendable, Equatable {
    public var givenName: String?
    public var familyName: String?
    public var email: String?
    public var expiresAt: Int64

    public var profile: ClientProfile { ClientProfile(givenName: givenName, familyName: familyName, email: email) }
}

/// `pending_profiles`: kept 24 hours, adopted by the next successful sign-in of the `sub`.
public struct PendingProfileStore: Sendable {
    private let engine: any StoreEngine

    public static let holdTime: Int64 = 24 * 60 * 60

    init(engine: any StoreEngine) {
        self.engine = engine
    }

    /// Holds the profile until `now + 24 h`. Fields the new profile lacks keep earlier
    /// values; nothing is stored when every field is empty.
    package static func hold(appleSub: String, profile: ClientProfile, now: Int64, in connection: any SQLConnection) throws {
        let given = nonEmpty(profile.givenName), family = nonEmpty(profile.familyName), email = nonEmpty(profile.email)
        guard !(given.isNull && family.isNull && email.isNull) else { return }
        try connection.run(
            """
            INSERT INTO pending_profiles(apple_sub, given_name, family_name, email, expires_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(apple_sub) DO UPDATE SET
                given_name = COALESCE(excluded.given_name, pending_profiles.given_name),
                family_name = COALESCE(excluded.family_name, pending_profiles.family_name),
                email = COALESCE(excluded.email, pending_profiles.email),
                expires_at = excluded.expires_at
            """,
            [.text(appleSub), given, family, email, .integer(now + holdTime)]
        )
    }

    public func hold(appleSub: String, profile: ClientProfile, now: Int64) async throws {
        try await engine.write { try Self.hold(appleSub: appleSub, profile: profile, now: now, in: $0) }
    }

    /// Takes the unexpired profile of `appleSub` and deletes the row (expired or not), in the
    /// sign-in's transaction: if the sign-in rolls back, the profile is still there.
    package static func adopt(appleSub: String, now: Int64, in connection: any SQLConnection) throws -> PendingProfile? {
        let lookup = self.lookup(appleSub: appleSub)
        return try adopt(appleSub: appleSub, found: try connection.queryOne(lookup.sql, lookup.parameters), now: now, in: connection)
    }

    /// The read of `adopt`, as a statement to send with others (`SQLConnection.queries`).
    package static func lookup(appleSub: String) -> SQLStatement {
        SQLStatement("SELECT given_name, family_name, email, expires_at FROM pending_profiles WHERE apple_sub = ?", [.text(appleSub)])
    }

    /// The rest of `adopt`, given the row its lookup found: the profile is used up.
    package static func adopt(appleSub: String, found row: SQLRow?, now: Int64, in connection: any SQLConnection) throws -> PendingProfile? {
        guard let row else { return nil }
        try connection.runDeferred("DELETE FROM pending_profiles WHERE apple_sub = ?", [.text(appleSub)])
        let expiresAt = try row.int64("expires_at")
        guard expiresAt > now else { return nil }
        return PendingProfile(
            givenName: try row.optionalString("given_name"), familyName: try row.optionalString("family_name"),
            email: try row.optionalString("email"), expiresAt: expiresAt
        )
    }

    /// Deletes profiles past their 24 hours; returns how many.
    @discardableResult
    public func prune(now: Int64) async throws -> Int {
        try await engine.write { try Self.prune(in: $0, now: now) }
    }

    static func prune(in connection: any SQLConnection, now: Int64) throws -> Int {
        try connection.run("DELETE FROM pending_profiles WHERE expires_at <= ?", [.integer(now)])
    }

    private static func nonEmpty(_ text: String?) -> SQLValue {
        guard let text, !text.isEmpty else { return .null }
        return .text(text)
    }
}
