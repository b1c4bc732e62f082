import Accounts
import JSON
import Store

/// A session as docs/reference/http-api.md lists it (`GET /api/sessions`) and the admin API shows it.
enum SessionJSON {
    /// `current` says whether it is the session of the request; nil leaves the field out (the
    /// admin API has no session of its own).
    static func value(_ session: SessionRecord, current: Bool? = nil) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("id", .string(session.id)), ("created_at", .string(RFC3339.format(session.createdAt))),
            ("last_seen_at", .string(RFC3339.format(session.lastSeenAt))),
            ("expires_at", .string(RFC3339.format(session.expiresAt))),
            ("device_name", session.deviceName.map(JSONValue.string) ?? .null),
            ("method", session.origin.map { .string($0.method.rawValue) } ?? .null),
            ("ip", session.origin?.ip.map(JSONValue.string) ?? .null),
            ("user_agent", session.origin?.userAgent.map(JSONValue.string) ?? .null),
        ]
        if let current { members.append(("current", .bool(current))) }
        return .object(JSONObject(members))
    }
}
