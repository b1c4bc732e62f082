import SQLRow

/// One `users` row (docs/reference/http-api.md `USER`). Times are Unix seconds.
public struct UserRecord: Sendable, Equatable {
    public enum EmailForwarding: String, Sendable {
        case enabled, disabled
    }

    public enum RealUserStatus: String, Sendable {
        case unsupported, unknown
        case likelyReal = "likely_real"
    }

    public enum AppleCredential: String, Sendable {
        case authorized, revoked
    }

    public var id: String
    /// nil for a user without an Apple ID (a password account, docs/guides/passwords-and-email.md).
    public var appleSub: String?
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    /// nil when the email is not a private relay address.
    public var emailForwarding: EmailForwarding?
    public var realUserStatus: RealUserStatus
    public var givenName: String?
    public var familyName: String?
    public var appleCredential: AppleCredential
    /// The team's own id for this user (docs/guides/connecting-your-backend.md), unique when set.
    public var externalID: String?
    /// Whether the user can sign in with an email and password (docs/guides/passwords-and-email.md).
    public var hasPassword: Bool
    /// The language of the mail written to the user (docs/guides/passwords-and-email.md): `en` or `ko`.
    public var locale: String
    public var createdAt: Int64
    public var updatedAt: Int64

    /// The sign-in methods the user has, in docs/guides/connecting-your-backend.md's order.
    public var signInMethods: [String] {
        (appleSub == nil ? [] : ["apple"]) + (hasPassword ? ["password"] : [])
    }

    /// The `users` columns `init(row:)` reads.
    private static let storedColumns = [
        "id", "apple_sub", "email", "email_verified", "is_private_email", "email_forwarding", "real_user_status", "given_name",
        "family_name", "apple_credential", "external_id", "locale", "created_at", "updated_at",
    ]

    /// The `users` columns, qualified by `u.` so the same list serves joins, and whether a
    /// password credential exists (a primary-key lookup). Every change to the credential's
    /// existence also updates the user row, so caches keyed on that row stay true.
    static let columns = storedColumns.map { "u." + $0 }.joined(separator: ", ")
        + ", EXISTS (SELECT 1 FROM password_credentials p WHERE p.user_id = u.id) AS has_password"

    /// `columns` for the RETURNING clause of an INSERT or UPDATE of `users` (which has no alias
    /// there on SQLite).
    static let returnedColumns = storedColumns.joined(separator: ", ")
        + ", EXISTS (SELECT 1 FROM password_credentials p WHERE p.user_id = users.id) AS has_password"

    init(row: SQLRow) throws {
        id = try row.string("id")
        appleSub = try row.optionalString("apple_sub")
        email = try row.optionalString("email")
        emailVerified = try row.int64("email_verified") != 0
        isPrivateEmail = try row.int64("is_private_email") != 0
        emailForwarding = try row.optionalString("email_forwarding").map(Self.decode)
        realUserStatus = try Self.decode(row.string("real_user_status"))
        givenName = try row.optionalString("given_name")
        familyName = try row.optionalString("family_name")
        appleCredential = try Self.decode(row.string("apple_credential"))
        externalID = try row.optionalString("external_id")
        hasPassword = try row.bool("has_password")
        locale = try row.string("locale")
        createdAt = try row.int64("created_at")
        updatedAt = try row.int64("updated_at")
    }

    /// Whether a webhook receiver would see a change between `earlier` and this record: the
    /// fields docs/guides/connecting-your-backend.md names for `user.updated` (not `updated_at` or `real_user_status`).
    public func differsVisibly(from earlier: UserRecord) -> Bool {
        email != earlier.email || emailVerified != earlier.emailVerified || isPrivateEmail != earlier.isPrivateEmail
            || emailForwarding != earlier.emailForwarding || givenName != earlier.givenName || familyName != earlier.familyName
            || appleCredential != earlier.appleCredential || appleSub != earlier.appleSub || externalID != earlier.externalID
            || hasPassword != earlier.hasPassword
    }

    /// The schema's CHECK constraints keep these columns to the enums' raw values; anything
    /// else means the file was edited behind the server's back.
    private static func decode<T: RawRepresentable>(_ text: String) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: text) else {
            throw StoreError.invariant("unexpected value '\(text)' for \(T.self)")
        }
        return value
    }
}
