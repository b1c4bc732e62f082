import JSON
import WireFormat

/// A refresh or access token handed out by `/auth/token`. Refresh tokens have no expiry: they
/// live until revoked (APPLE.md §2.2); access tokens last an hour.
struct IssuedToken: Sendable, Equatable {
    var token: String
    var kind: TokenKind
    /// Empty for a team token (`client_credentials`).
    var sub: String
    var clientID: String
    /// The team it was issued to: a token dies with its team's hold on the app.
    var teamID: String
    var email: String?
    var isPrivateEmail: Bool
    var issuedAt: Int64
    /// nil for refresh tokens.
    var expiresAt: Int64?

    func isLive(now: Int64) -> Bool { expiresAt.map { now < $0 } ?? true }

    var json: JSONValue {
        .object(.compact([
            ("token", .string(token)), ("kind", .string(kind.rawValue)), ("sub", .string(sub)),
            ("client_id", .string(clientID)), ("team_id", .string(teamID)), ("email", .optional(email)), ("is_private_email", .bool(isPrivateEmail)),
            ("issued_at", .integer(issuedAt)), ("expires_at", expiresAt.map { .integer($0) }),
        ]))
    }

    init(
        token: String, kind: TokenKind, sub: String, clientID: String, teamID: String, email: String?, isPrivateEmail: Bool,
        issuedAt: Int64, expiresAt: Int64?
    ) {
        self.token = token
        self.kind = kind
        self.sub = sub
        self.clientID = clientID
        self.teamID = teamID
        self.email = email
        self.isPrivateEmail = isPrivateEmail
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    /// Tokens saved before teams existed belong to `defaultTeam`.
    init?(json: JSONObject, defaultTeam: String) {
        guard let token = json.text("token"), let kind = json.text("kind").flatMap(TokenKind.init(rawValue:)),
              let sub = json.text("sub"), let clientID = json.text("client_id")
        else { return nil }
        self.init(
            token: token, kind: kind, sub: sub, clientID: clientID, teamID: json.text("team_id") ?? defaultTeam, email: json.text("email"),
            isPrivateEmail: json.flag("is_private_email") ?? false, issuedAt: json.number("issued_at") ?? 0,
            expiresAt: json.number("expires_at"))
    }
}
