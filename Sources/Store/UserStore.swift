import SQLRow

/// What a verified identity token says about its subject. Only these values may overwrite
/// what is stored: they are signed by Apple.
public struct VerifiedIdentity: Sendable, Equatable {
    public var appleSub: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    /// nil when the token has no `real_user_status` claim (the stored value is then kept).
    public var realUserStatus: UserRecord.RealUserStatus?
    /// Within 60 days of the app's transfer to this team: the user's `transfer_sub`, by which a
    /// user not yet imported is found (docs/guides/team-transfer.md).
    public var transferSub: String?

    public init(
        appleSub: String, email: String? = nil, emailVerified: Bool = false, isPrivateEmail: Bool = false,
        realUserStatus: UserRecord.RealUserStatus? = nil, transferSub: String? = nil
    ) {
        self.appleSub = appleSub
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.realUserStatus = realUserStatus
        self.transferSub = transferSub
    }
}

/// Name and email from the client's `user` object (or an adopted pending profile): unsigned,
/// sent by Apple only on the first authorization, so used only when the account is created.
public struct ClientProfile: Sendable, Equatable {
    public var givenName: String?
    public var familyName: String?
    public var email: String?

    public init(givenName: String? = nil, familyName: String? = nil, email: String? = nil) {
        self.givenName = givenName
        self.familyName = familyName
        self.email = email
    }
}

/// Reads and writes `users`. Writes that belong to a larger unit (sign-in, a notification)
/// are static functions taking the caller's write connection, so they commit with it.
public struct UserStore: Sendable {
    let engine: any StoreEngine

    init(engine: any StoreEngine) {
        self.engine = engine
    }

    public func user(id: String) async throws -> UserRecord? {
        try await engine.read { try Self.user(id: id, in: $0) }
    }

    public func user(appleSub: String) async throws -> UserRecord? {
        try await engine.read { try Self.user(appleSub: appleSub, in: $0) }
    }

    package static func user(id: String, in connection: any SQLConnection) throws -> UserRecord? {
        try connection.queryOne(byIDSQL, [.text(id)]).map(UserRecord.init)
    }

    package static func user(appleSub: String, in connection: any SQLConnection) throws -> UserRecord? {
        try connection.queryOne(byAppleSubSQL, [.text(appleSub)]).map(UserRecord.init)
    }

    /// `user(appleSub:in:)` as a statement to send with others (`SQLConnection.queries`); its
    /// first row is the user.
    package static func lookup(appleSub: String) -> SQLStatement {
        SQLStatement(byAppleSubSQL, [.text(appleSub)])
    }

    // Built once: every sign-in runs them, and an interpolated string is a new allocation to
    // build and hash for the statement cache on each call.
    private static let byIDSQL = "SELECT \(UserRecord.columns) FROM users u WHERE u.id = ?"
    private static let byAppleSubSQL = "SELECT \(UserRecord.columns) FROM users u WHERE u.apple_sub = ?"

    // MARK: - Sign-in

    /// Creates the user of `identity.appleSub`, or updates the existing one, inside the
    /// caller's write transaction. Returns the row as stored and whether it was created.
    ///
    /// Precedence (docs/reference/http-api.md `USER`): the token's email, `email_verified` and
    /// `is_private_email` always win; `profile` (unsigned) fills in name and email only at
    /// creation, and an email known only from it is stored unverified. Signing in restores
    /// `apple_credential` to `authorized` (after `consent-revoked`). `locale` is a new user's
    /// language (docs/guides/passwords-and-email.md), from the request.
    package static func upsertOnSignIn(
        in connection: any SQLConnection, identity: VerifiedIdentity, profile: ClientProfile?, locale: String = "en", now: Int64
    ) throws -> (user: UserRecord, created: Bool) {
        try upsertOnSignIn(
            in: connection, identity: identity, existing: user(appleSub: identity.appleSub, in: connection), profile: profile,
            locale: locale, now: now)
    }

    /// `upsertOnSignIn`, given the row of `identity.appleSub` as this transaction already read
    /// it (nil: there is none): one statement that also returns the row as stored.
    package static func upsertOnSignIn(
        in connection: any SQLConnection, identity: VerifiedIdentity, existing: UserRecord?, profile: ClientProfile?, locale: String = "en",
        now: Int64
    ) throws -> (user: UserRecord, created: Bool) {
        if let existing {
            var values: [SQLValue] = []
            if let email = identity.email {
                values += [.text(email), SQLValue(identity.emailVerified), SQLValue(identity.isPrivateEmail), SQLValue(identity.isPrivateEmail)]
            }
            if let status = identity.realUserStatus { values.append(.text(status.rawValue)) }
            values += [.integer(now), .text(existing.id)]
            let sql = signInUpdates[(identity.email == nil ? 0 : 1) | (identity.realUserStatus == nil ? 0 : 2)]
            guard let updated = try connection.queryOne(sql, values).map(UserRecord.init) else {
                throw StoreError.invariant("user \(existing.id) vanished inside its own transaction")
            }
            return (updated, false)
        }

        let fromToken = identity.email != nil
        let email = identity.email ?? profile?.email
        let isPrivate = fromToken && identity.isPrivateEmail
        let id = RecordID.make(prefix: "usr_", orderedBy: now)
        let inserted = try connection.queryOne(
            """
            INSERT INTO users(id, apple_sub, email, email_verified, is_private_email, email_forwarding,
                real_user_status, given_name, family_name, apple_credential, locale, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'authorized', ?, ?, ?)
            RETURNING \(UserRecord.returnedColumns)
            """,
            [
                .text(id), .text(identity.appleSub), email.map(SQLValue.text) ?? .null,
                SQLValue(fromToken && identity.emailVerified), SQLValue(isPrivate),
                isPrivate ? .text("enabled") : .null,
                .text((identity.realUserStatus ?? .unsupported).rawValue),
                nonEmpty(profile?.givenName), nonEmpty(profile?.familyName), .text(locale),
                .integer(now), .integer(now),
            ]
        )
        guard let created = try inserted.map(UserRecord.init) else {
            throw StoreError.invariant("user \(id) vanished inside its own transaction")
        }
        return (created, true)
    }

    /// The sign-in's UPDATE of a known user, by what the token carries: index bit 1 an email
    /// (the token's email, `email_verified` and `is_private_email` win; a relay address starts
    /// forwarding, a known forwarding state is kept since a notification may have disabled it,
    /// a non-relay address has none), bit 2 a `real_user_status` (else the stored one is kept).
    /// Signing in always restores `apple_credential` to `authorized` (after `consent-revoked`).
    private static let signInUpdates: [String] = (0..<4).map { variant in
        var assignments: [String] = []
        if variant & 1 != 0 {
            assignments += [
                "email = ?", "email_verified = ?", "is_private_email = ?",
                "email_forwarding = CASE WHEN ? = 1 THEN COALESCE(email_forwarding, 'enabled') ELSE NULL END",
            ]
        }
        if variant & 2 != 0 { assignments.append("real_user_status = ?") }
        assignments += ["apple_credential = 'authorized'", "updated_at = ?"]
        return "UPDATE users SET \(assignments.joined(separator: ", ")) WHERE id = ? RETURNING \(UserRecord.returnedColumns)"
    }

    private static func nonEmpty(_ text: String?) -> SQLValue {
        guard let text, !text.isEmpty else { return .null }
        return .text(text)
    }

    // MARK: - Notifications and deletion

    /// `email-enabled` / `email-disabled`: sets forwarding, and the email and its privacy
    /// when the event carries them (events are signed by Apple, so they count as verified).
    /// Returns whether anything changed; false also for an unknown `sub`.
    @discardableResult
    package static func setEmailForwarding(
        in connection: any SQLConnection, appleSub: String, enabled: Bool, email: String? = nil, isPrivateEmail: Bool? = nil,
        now: Int64
    ) throws -> Bool {
        guard let existing = try user(appleSub: appleSub, in: connection) else { return false }
        let forwarding: UserRecord.EmailForwarding = enabled ? .enabled : .disabled
        let newEmail = email ?? existing.email
        let newPrivate = isPrivateEmail ?? existing.isPrivateEmail
        let newVerified = email != nil ? true : existing.emailVerified
        guard existing.emailForwarding != forwarding || newEmail != existing.email
            || newPrivate != existing.isPrivateEmail || newVerified != existing.emailVerified
        else { return false }
        try connection.run(
            """
            UPDATE users SET email_forwarding = ?, email = ?, is_private_email = ?, email_verified = ?, updated_at = ?
            WHERE id = ?
            """,
            [.text(forwarding.rawValue), newEmail.map(SQLValue.text) ?? .null, SQLValue(newPrivate),
             SQLValue(newVerified), .integer(now), .text(existing.id)]
        )
        return true
    }

    /// `consent-revoked` (or a refresh token Apple refuses): the credential is marked revoked,
    /// every session ends and the stored Apple tokens are dropped, in the caller's
    /// transaction. The user row stays so the next sign-in restores the same account.
    /// Returns whether anything changed.
    @discardableResult
    package static func markRevoked(in connection: any SQLConnection, userID: String, now: Int64) throws -> Bool {
        let marked = try connection.run(
            "UPDATE users SET apple_credential = 'revoked', updated_at = ? WHERE id = ? AND apple_credential <> 'revoked'",
            [.integer(now), .text(userID)]
        )
        let sessions = try SessionStore.endAll(userID: userID, in: connection)
        let tokens = try AppleTokenVault.drop(userID: userID, in: connection)
        return marked > 0 || sessions > 0 || tokens
    }

    /// Deletes the user; its sessions and stored Apple tokens go with it (ON DELETE CASCADE).
    /// Returns false when there was no such user.
    @discardableResult
    package static func delete(in connection: any SQLConnection, userID: String) throws -> Bool {
        try connection.run("DELETE FROM users WHERE id = ?", [.text(userID)]) > 0
    }

    public func setEmailForwarding(
        appleSub: String, enabled: Bool, email: String? = nil, isPrivateEmail: Bool? = nil, now: Int64
    ) async throws -> Bool {
        try await engine.write {
            try Self.setEmailForwarding(in: $0, appleSub: appleSub, enabled: enabled, email: email, isPrivateEmail: isPrivateEmail, now: now)
        }
    }

    public func markRevoked(userID: String, now: Int64) async throws -> Bool {
        try await engine.write { try Self.markRevoked(in: $0, userID: userID, now: now) }
    }

    public func delete(userID: String) async throws -> Bool {
        try await engine.write { try Self.delete(in: $0, userID: userID) }
    }
}
