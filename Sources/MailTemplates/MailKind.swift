/// What a message is for; the `kind` label of the mail metrics (docs/guides/passwords-and-email.md).
public enum MailKind: String, Sendable, CaseIterable {
    /// Values: `link`, `code`, `expires_at`.
    case verifyEmail = "verify_email"
    /// Values: `link`, `code`, `expires_at`.
    case passwordReset = "password_reset"
    /// Values: `change` (a `SecurityChange` raw value), `when`, `device`.
    case securityNotice = "security_notice"
    /// Values: `when`.
    case accountDeleted = "account_deleted"
    /// `siwa-server email test`. Values: `when`.
    case test
}
