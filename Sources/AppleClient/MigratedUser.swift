import JSON

/// What `auth/usermigrationinfo` tells the receiving team about a user (APPLE.md §8): their
/// `sub` in this team, and their new relay address when they hide their email. Holds personal
/// data: never logged.
public struct MigratedUser: Sendable, Equatable {
    public let sub: String
    /// Only for users of Hide My Email: each team gets its own relay address.
    public let email: String?
    /// Whether `email` is a relay address: Apple's `is_private_email`, and nothing else. The
    /// address's domain says nothing (relay addresses were `@privaterelay.appleid.com`; new
    /// ones are reported at `@private.icloud.com`). A real boolean on this endpoint, read as
    /// tolerantly as the identity token's anyway; absent, it is false.
    public let isPrivateEmail: Bool

    public init(sub: String, email: String?, isPrivateEmail: Bool) {
        self.sub = sub
        self.email = email
        self.isPrivateEmail = isPrivateEmail
    }

    init?(_ object: JSONObject) {
        guard let sub = object["sub"]?.string, !sub.isEmpty else { return nil }
        self.sub = sub
        email = object["email"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        isPrivateEmail = switch object["is_private_email"] {
        case .bool(let flag)?: flag
        case .string(let text)?: text.lowercased() == "true"
        default: false
        }
    }
}
