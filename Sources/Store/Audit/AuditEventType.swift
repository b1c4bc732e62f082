/// Every type of audit event (docs/reference/http-api.md, "Activity").
public enum AuditEventType: String, Sendable, CaseIterable {
    case userCreated = "user.created"
    case userDeleted = "user.deleted"
    case userUpdated = "user.updated"
    case emailVerified = "email.verified"
    case emailSuppressed = "email.suppressed"
    case signInSucceeded = "sign_in.succeeded"
    case signInFailed = "sign_in.failed"
    case sessionEnded = "session.ended"
    case appleEmailDisabled = "apple.email_disabled"
    case appleEmailEnabled = "apple.email_enabled"
    case appleConsentRevoked = "apple.consent_revoked"
    case appleAccountDeleted = "apple.account_deleted"
    case appleRefreshRefused = "apple.refresh_refused"
    case appleTokensRevoked = "apple.tokens_revoked"
    case passwordSet = "password.set"
    case passwordChanged = "password.changed"
    case passwordReset = "password.reset"
    case passwordRemoved = "password.removed"
    case appleIDLinked = "apple_id.linked"
    case appleIDUnlinked = "apple_id.unlinked"
    case adminSignedIn = "admin.signed_in"
    case transferExported = "transfer.exported"
    case transferImported = "transfer.imported"

    /// The types a filter's prefix matches (`sign_in.` gives both sign-in types), in a fixed
    /// order: the query names them, so it reads an index whatever the database's collation.
    public static func matching(prefix: String) -> [AuditEventType] {
        allCases.filter { $0.rawValue.hasPrefix(prefix) }
    }
}

/// How a session was made (`sign_in.succeeded`'s `method`, and a session's).
public enum SignInMethod: String, Sendable, CaseIterable {
    case apple, password, upgrade, exchange, web
}

/// Why sessions ended (`session.ended`'s `reason`). Sessions that merely expire are not recorded.
public enum SessionEndReason: String, Sendable, CaseIterable {
    case logout
    case endedByUser = "ended_by_user"
    case passwordChanged = "password_changed"
    case passwordReset = "password_reset"
    case admin
    case appleConsentRevoked = "apple_consent_revoked"
    case appleAccountDeleted = "apple_account_deleted"
    case refreshRefused = "refresh_refused"
    case accountDeleted = "account_deleted"
}
