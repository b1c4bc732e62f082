import JSON
import Store

/// The `USER` object of docs/reference/http-api.md, in the order it is documented.
package enum UserJSON {
    package static func value(_ user: UserRecord) -> JSONValue {
        .object(object(user))
    }

    package static func object(_ user: UserRecord) -> JSONObject {
        let name: JSONValue
        if user.givenName == nil && user.familyName == nil {
            name = .null
        } else {
            name = .object(JSONObject([
                ("given", user.givenName.map(JSONValue.string) ?? .null), ("family", user.familyName.map(JSONValue.string) ?? .null),
            ]))
        }
        return JSONObject([
            ("id", .string(user.id)),
            ("apple_sub", user.appleSub.map(JSONValue.string) ?? .null),
            ("email", user.email.map(JSONValue.string) ?? .null),
            ("email_verified", .bool(user.emailVerified)),
            ("is_private_email", .bool(user.isPrivateEmail)),
            ("email_forwarding", user.emailForwarding.map { .string($0.rawValue) } ?? .null),
            ("real_user_status", .string(user.realUserStatus.rawValue)),
            ("name", name),
            // The state of an Apple ID the user has; none without one.
            ("apple_credential", user.appleSub == nil ? .null : .string(user.appleCredential.rawValue)),
            ("external_id", user.externalID.map(JSONValue.string) ?? .null),
            ("sign_in_methods", .array(user.signInMethods.map(JSONValue.string))),
            ("locale", .string(user.locale)),
            ("created_at", .string(RFC3339.format(user.createdAt))),
            ("updated_at", .string(RFC3339.format(user.updatedAt))),
        ])
    }
}
