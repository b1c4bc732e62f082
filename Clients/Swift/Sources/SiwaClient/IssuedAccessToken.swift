import Foundation

/// An access token and when this client stops using it.
struct IssuedAccessToken: Sendable {
    let token: String
    let expiresAt: Date
    /// The session it was issued for: a new session never reuses another's token.
    let sessionToken: String

    /// The body of `POST /api/token`.
    struct Answer: Decodable {
        let accessToken: String
        let expiresIn: Int
    }

    /// The JWT's own `exp` when it can be read, else the answer's `expires_in` from `now`.
    init(_ answer: Answer, sessionToken: String, now: Date) {
        token = answer.accessToken
        self.sessionToken = sessionToken
        expiresAt = Self.expiry(of: answer.accessToken) ?? now.addingTimeInterval(TimeInterval(answer.expiresIn))
    }

    static func expiry(of jwt: String) -> Date? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let claims = try? JSONDecoder().decode([String: JSONValue].self, from: payload),
            case .number(let exp) = claims["exp"]
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}
