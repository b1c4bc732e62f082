import JSON
import Store

/// The body of a webhook event (docs/guides/connecting-your-backend.md): `{"type", "timestamp", "data"}`, rendered once when
/// the change commits, so every delivery attempt sends and signs the same bytes.
package enum WebhookEventBody {
    package static let renderer = WebhookEventRenderer(includesSessions: true) { type, data, now in
        JSONWriter.string(.object(JSONObject([
            ("type", .string(type.rawValue)),
            ("timestamp", .string(RFC3339.format(now))),
            ("data", value(data)),
        ])))
    }

    package static func value(_ data: WebhookEventData) -> JSONValue {
        switch data {
        case .user(let user):
            return UserJSON.value(user)
        case .deleted(let user, let reason):
            return .object(JSONObject([
                ("id", .string(user.id)),
                ("apple_sub", user.appleSub.map(JSONValue.string) ?? .null),
                ("external_id", user.externalID.map(JSONValue.string) ?? .null),
                ("reason", .string(reason.rawValue)),
            ]))
        case .passwordResetRequested(let userID, let email, let code, let expiresAt),
             .emailVerificationRequested(let userID, let email, let code, let expiresAt):
            return .object(JSONObject([
                ("id", .string(userID)), ("email", .string(email)), ("code", .string(code)),
                ("expires_at", .string(RFC3339.format(expiresAt))),
            ]))
        case .sessionCreated(let session, let method):
            return .object(JSONObject([
                ("id", .string(session.id)), ("user_id", .string(session.userID)), ("method", .string(method.rawValue)),
                ("device_name", session.deviceName.map(JSONValue.string) ?? .null),
            ]))
        case .sessionEnded(let id, let userID, let reason):
            return .object(JSONObject([("id", .string(id)), ("user_id", .string(userID)), ("reason", .string(reason.rawValue))]))
        }
    }
}
