import Accounts
import JSON
import Store

/// EVENT of docs/reference/http-api.md ("Activity"), and a page of them.
enum EventJSON {
    static func value(_ event: AuditEvent) -> JSONValue {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        return .object(JSONObject([
            ("id", .string(event.id)),
            ("at", .string(RFC3339.format(event.at))),
            ("type", .string(event.type)),
            ("user_id", text(event.userID)),
            ("session_id", text(event.sessionID)),
            ("actor", .string(event.actor)),
            ("ip", text(event.ip)),
            ("user_agent", text(event.userAgent)),
            ("detail", .object(event.detail)),
        ]))
    }

    /// `{"events":[EVENT…],"next_cursor"}`.
    static func page(_ events: [AuditEvent], next: AuditCursor?) -> JSONValue {
        .object(JSONObject([
            ("events", .array(events.map(value))),
            ("next_cursor", next.map { .string($0.encoded) } ?? .null),
        ]))
    }
}
