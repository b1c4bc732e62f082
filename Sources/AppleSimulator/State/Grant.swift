import JSON

/// A person's consent to one client. It exists from the first authorization on; while it does,
/// authorizations are not "first" and carry no `user`. Revoking a token of the client, the
/// person revoking consent, or deleting the account ends it (APPLE.md §1.2, §3).
struct Grant: Sendable, Equatable {
    var sub: String
    var clientID: String
    /// The address shared with this client, real or relay; nil when `email` was not in scope.
    var email: String?
    var isPrivateEmail: Bool
    /// Whether Hide My Email forwards mail sent to this client's relay address; the person
    /// turns it off and on in Settings (`email-disabled` / `email-enabled`, APPLE.md §7).
    var emailForwarding = true
    var createdAt: Int64

    var key: String { Self.key(sub: sub, clientID: clientID) }

    static func key(sub: String, clientID: String) -> String { sub + "\n" + clientID }

    var json: JSONValue {
        .object(.compact([
            ("sub", .string(sub)), ("client_id", .string(clientID)), ("email", .optional(email)),
            ("is_private_email", .bool(isPrivateEmail)), ("email_forwarding", emailForwarding ? nil : .bool(false)),
            ("created_at", .integer(createdAt)),
        ]))
    }

    init(sub: String, clientID: String, email: String?, isPrivateEmail: Bool, createdAt: Int64) {
        self.sub = sub
        self.clientID = clientID
        self.email = email
        self.isPrivateEmail = isPrivateEmail
        self.createdAt = createdAt
    }

    init?(json: JSONObject) {
        guard let sub = json.text("sub"), let clientID = json.text("client_id") else { return nil }
        self.init(
            sub: sub, clientID: clientID, email: json.text("email"), isPrivateEmail: json.flag("is_private_email") ?? false,
            createdAt: json.number("created_at") ?? 0)
        emailForwarding = json.flag("email_forwarding") ?? true
    }
}
