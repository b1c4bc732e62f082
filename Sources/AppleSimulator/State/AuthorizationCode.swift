import JOSE
import JSON

/// A code as Apple binds it: to the client it was issued to, to the authorize request's
/// `redirect_uri` (none for native codes), single use, five minutes (APPLE.md §2.1, §2.3).
struct AuthorizationCode: Sendable, Equatable {
    static let lifetime: Int64 = 300

    var code: String
    var sub: String
    var clientID: String
    var redirectURI: String?
    var nonce: String?
    var email: String?
    var isPrivateEmail: Bool
    var authTime: Int64
    var issuedAt: Int64
    var used: Bool

    func isExpired(now: Int64) -> Bool { now >= issuedAt + Self.lifetime }

    var json: JSONValue {
        .object(.compact([
            ("code", .string(code)), ("sub", .string(sub)), ("client_id", .string(clientID)),
            ("redirect_uri", .optional(redirectURI)), ("nonce", .optional(nonce)), ("email", .optional(email)),
            ("is_private_email", .bool(isPrivateEmail)), ("auth_time", .integer(authTime)),
            ("issued_at", .integer(issuedAt)), ("used", .bool(used)),
        ]))
    }

    init(
        code: String, sub: String, clientID: String, redirectURI: String?, nonce: String?, email: String?,
        isPrivateEmail: Bool, authTime: Int64, issuedAt: Int64, used: Bool = false
    ) {
        self.code = code
        self.sub = sub
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.nonce = nonce
        self.email = email
        self.isPrivateEmail = isPrivateEmail
        self.authTime = authTime
        self.issuedAt = issuedAt
        self.used = used
    }

    init?(json: JSONObject) {
        guard let code = json.text("code"), let sub = json.text("sub"), let clientID = json.text("client_id"),
              // A hand-edited state file must not make `issuedAt + lifetime` overflow.
              let issuedAt = json.number("issued_at"), (0...AppleClaims.latestTime).contains(issuedAt)
        else { return nil }
        self.init(
            code: code, sub: sub, clientID: clientID, redirectURI: json.text("redirect_uri"), nonce: json.text("nonce"),
            email: json.text("email"), isPrivateEmail: json.flag("is_private_email") ?? false,
            authTime: json.number("auth_time") ?? issuedAt, issuedAt: issuedAt, used: json.flag("used") ?? false)
    }
}
