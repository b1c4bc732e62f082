import JSON

/// Apple's TokenResponse (APPLE.md §2.2). Its fields are secrets: nothing here is ever logged.
public struct TokenResponse: Sendable {
    public let accessToken: String
    public let tokenType: String
    public let expiresIn: Int64?
    /// Only from the authorization-code grant.
    public let refreshToken: String?
    /// Documented for both grants; some deployments omitted it on refresh (APPLE.md §2.2).
    public let idToken: String?

    init?(_ object: JSONObject) {
        guard let accessToken = object["access_token"]?.string, !accessToken.isEmpty else { return nil }
        self.accessToken = accessToken
        // Documented as "bearer", sent as "Bearer": compare without case.
        tokenType = object["token_type"]?.string ?? "Bearer"
        guard tokenType.lowercased() == "bearer" else { return nil }
        // A lifetime that is negative or past a year is no lifetime anyone should add to a clock.
        expiresIn = object["expires_in"]?.integer.flatMap { (0...31_536_000).contains($0) ? $0 : nil }
        refreshToken = object["refresh_token"]?.string
        idToken = object["id_token"]?.string
    }
}
