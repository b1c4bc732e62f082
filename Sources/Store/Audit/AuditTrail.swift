import JSON
import WireFormat
import SQLRow

/// Writes audit events inside the caller's transaction: a change commits with its event or not
/// at all, and an event never outlives a rolled-back change. One prepared INSERT per event,
/// deferred: on PostgreSQL it travels with the transaction's next statement or its COMMIT, so
/// the trail costs no round trip of its own.
enum AuditTrail {
    static let insertSQL = """
        INSERT INTO events(id, at, type, user_id, session_id, actor, ip, user_agent, detail)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    static func record(
        _ type: AuditEventType, userID: String?, sessionID: String? = nil, detail: JSONObject = JSONObject(),
        context: AuditContext, now: Int64, in connection: any SQLConnection
    ) throws {
        try connection.runDeferred(
            insertSQL,
            [.text(RecordID.make(prefix: "evt_")), .integer(now), .text(type.rawValue), optional(userID),
             optional(sessionID ?? context.sessionID), .text(context.actor.rawValue), optional(context.ip),
             optional(context.userAgent), .text(JSONWriter.string(.object(detail)))])
    }

    /// `session.ended` for each of `sessionIDs`, with `reason`: in the audit trail, and as a
    /// webhook event when `outbox` has a renderer.
    static func recordEnded(
        _ sessionIDs: [String], userID: String, reason: SessionEndReason, context: AuditContext, now: Int64, outbox: WebhookOutbox?,
        in connection: any SQLConnection
    ) throws {
        for id in sessionIDs {
            try outbox?.append(.sessionEnded, .sessionEnded(id: id, userID: userID, reason: reason), now: now, in: connection)
            try record(.sessionEnded, userID: userID, sessionID: id, detail: JSONObject([("reason", .string(reason.rawValue))]), context: context, now: now, in: connection)
        }
    }

    private static func optional(_ text: String?) -> SQLValue { text.map(SQLValue.text) ?? .null }
}

extension AuditTrail {
    /// `user.updated` with the names of the fields that changed; nothing when none did.
    static func recordUpdate(
        from before: UserRecord?, to after: UserRecord?, context: AuditContext, now: Int64, in connection: any SQLConnection
    ) throws {
        guard let before, let after else { return }
        let fields = after.changedFields(from: before)
        guard !fields.isEmpty else { return }
        try record(
            .userUpdated, userID: after.id, detail: JSONObject([("fields", .array(fields.map(JSONValue.string)))]), context: context, now: now,
            in: connection)
    }

    /// A detail of string members.
    static func detail(_ members: KeyValuePairs<String, String>) -> JSONObject {
        JSONObject(members.map { ($0.key, JSONValue.string($0.value)) })
    }
}

extension AuditTrail {
    /// `sign_in.succeeded` for the session just made.
    static func recordSignIn(
        _ userID: String, session: String, method: SignInMethod, created: Bool, context: AuditContext, now: Int64,
        in connection: any SQLConnection
    ) throws {
        try record(
            .signInSucceeded, userID: userID, sessionID: session,
            detail: JSONObject([("method", .string(method.rawValue)), ("created", .bool(created))]), context: context, now: now, in: connection)
    }
}

extension AuditTrail {
    /// `apple.tokens_revoked`: the user's Apple token (`kind` names which, never its value) is
    /// queued for revocation at Apple, in the transaction that let go of it.
    static func recordTokensRevoked(userID: String, kind: TokenKind, now: Int64, in connection: any SQLConnection) throws {
        try record(.appleTokensRevoked, userID: userID, detail: detail(["kind": kind.rawValue]), context: .system, now: now, in: connection)
    }
}
