/// A one-time code that proves an email by reaching its inbox (docs/guides/passwords-and-email.md): made by the
/// application (128 random bits, base64url), of which the database keeps only `codeHash`.
public struct EmailCode: Sendable {
    public enum Kind: String, Sendable {
        /// Proves the password's email (24 hours).
        case verifyEmail = "verify_email"
        /// Sets a new password, and proves the email too (30 minutes).
        case passwordReset = "password_reset"

        /// The table that holds this kind's live codes.
        var table: String {
            switch self {
            case .verifyEmail: "email_verification_codes"
            case .passwordReset: "password_reset_codes"
            }
        }
    }

    /// What asking for a code did; the answer to the client is the same for all three.
    public enum Outcome: Sendable, Equatable {
        case issued
        /// The address had its codes of this kind for the hour: nothing was stored or sent.
        case rateLimited
        /// No password has that email, or it is proven already: nothing to send.
        case notNeeded
    }

    public let kind: Kind
    public let code: String
    public let codeHash: [UInt8]
    public let expiresAt: Int64

    public init(kind: Kind, code: String, codeHash: [UInt8], expiresAt: Int64) {
        self.kind = kind
        self.code = code
        self.codeHash = codeHash
        self.expiresAt = expiresAt
    }

    /// Codes of one kind sent to one address per hour, and live codes of one kind per user.
    public static let perAddressPerHour: Int64 = 3
    public static let sendWindow: Int64 = 60 * 60
    public static let livePerUser = 5
}
