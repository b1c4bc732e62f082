import OpenSSLCrypto
import SQLRow

/// The events of docs/guides/connecting-your-backend.md that a change to a user emits.
public enum WebhookEventType: String, Sendable, CaseIterable {
    case userCreated = "user.created"
    case userUpdated = "user.updated"
    case userConsentRevoked = "user.consent_revoked"
    case userDeleted = "user.deleted"
    case userPasswordResetRequested = "user.password_reset_requested"
    case userEmailVerificationRequested = "user.email_verification_requested"
    case sessionCreated = "session.created"
    case sessionEnded = "session.ended"
}

/// Why a user was deleted, as `user.deleted` reports it.
public enum DeletionReason: String, Sendable {
    case accountDeleted = "account_deleted"
    case appleAccountDeleted = "apple_account_deleted"
    case admin
    /// docs/guides/passwords-and-email.md: another user proved the email this user held unproven.
    case emailClaimed = "email_claimed"
}

/// What an event says about its user: the user as it now is, or what is left of a deleted one.
public enum WebhookEventData: Sendable {
    case user(UserRecord)
    case deleted(UserRecord, reason: DeletionReason)
    /// docs/guides/passwords-and-email.md: the code travels only in the event (the database keeps its hash).
    case passwordResetRequested(userID: String, email: String, code: String, expiresAt: Int64)
    /// docs/guides/passwords-and-email.md: likewise a code that proves the email.
    case emailVerificationRequested(userID: String, email: String, code: String, expiresAt: Int64)
    /// A session made, and how.
    case sessionCreated(SessionRecord, method: SignInMethod)
    /// A session ended, and why (sessions that merely expire are not reported).
    case sessionEnded(id: String, userID: String, reason: SessionEndReason)
}

/// Turns an event into the body the receiver gets (`{"type","timestamp","data"}`). The
/// application renders it, since USER's JSON shape is the API's business; the Store only keeps
/// the bytes, so every retry sends (and signs) exactly the same body.
public struct WebhookEventRenderer: Sendable {
    public let body: @Sendable (_ type: WebhookEventType, _ data: WebhookEventData, _ now: Int64) -> String
    /// Whether `session.created` and `session.ended` are emitted: the application's renderer
    /// asks for them; a renderer that only knows users' events gets only those.
    public let includesSessions: Bool

    public init(
        includesSessions: Bool = false, body: @escaping @Sendable (_ type: WebhookEventType, _ data: WebhookEventData, _ now: Int64) -> String
    ) {
        self.includesSessions = includesSessions
        self.body = body
    }
}

/// The webhook outbox: events are appended inside the transaction of the change they report,
/// so a change commits with its event or not at all. Without a renderer (no `webhook_url`)
/// nothing is appended.
struct WebhookOutbox: Sendable {
    let renderer: WebhookEventRenderer?
    /// Seals the bodies that carry a secret (`WebhookBodySeal`).
    let cipher: AESGCM
    /// The mail outbox, carried here because every change that may mail someone already takes
    /// this outbox into its transaction.
    let mail: MailOutbox

    /// Appends one event for `data`'s user, due at once.
    func append(_ type: WebhookEventType, _ data: WebhookEventData, now: Int64, in connection: any SQLConnection) throws {
        guard let renderer else { return }
        if case .sessionCreated = data, !renderer.includesSessions { return }
        if case .sessionEnded = data, !renderer.includesSessions { return }
        let id = RecordID.make(prefix: "msg_")
        let userID: String
        var body = renderer.body(type, data, now)
        switch data {
        case .user(let user), .deleted(let user, _):
            userID = user.id
        case .sessionCreated(let session, _):
            userID = session.userID
        case .sessionEnded(_, let user, _):
            userID = user
        case .passwordResetRequested(let user, _, _, _), .emailVerificationRequested(let user, _, _, _):
            userID = user
            body = try WebhookBodySeal.seal(body, id: id, with: cipher)
        }
        try connection.run(
            "INSERT INTO webhook_events(id, user_id, type, body, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?)",
            [.text(id), .text(userID), .text(type.rawValue), .text(body), .integer(now), .integer(now)])
    }

    /// `user.updated` when `after` differs from `before` in anything a receiver sees.
    func appendIfChanged(from before: UserRecord?, to after: UserRecord?, now: Int64, in connection: any SQLConnection) throws {
        guard let before, let after, after.differsVisibly(from: before) else { return }
        try append(.userUpdated, .user(after), now: now, in: connection)
    }
}

/// A webhook body that carries a code, sealed while it waits (`OutboxBodySeal`).
enum WebhookBodySeal {
    static func seal(_ body: String, id: String, with cipher: AESGCM) throws -> String {
        try OutboxBodySeal.seal(body, id: id, table: .webhooks, with: cipher)
    }

    static func open(_ stored: String, id: String, with cipher: AESGCM?) -> String? {
        OutboxBodySeal.open(stored, id: id, table: .webhooks, with: cipher)
    }
}
