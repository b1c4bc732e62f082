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

    /// Its life is counted from `expires_in` on this device's clock, not from the JWT's `exp`: a
    /// phone whose clock is minutes off would otherwise send expired tokens, or never reuse one.
    init(_ answer: Answer, sessionToken: String, receivedAt now: Date) {
        token = answer.accessToken
        self.sessionToken = sessionToken
        expiresAt = now.addingTimeInterval(TimeInterval(answer.expiresIn))
    }
}
