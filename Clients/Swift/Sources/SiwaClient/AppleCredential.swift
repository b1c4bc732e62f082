/// What `ASAuthorizationAppleIDCredential` holds, as plain values (Linux and tests build it by
/// hand; on Apple platforms `AppleCredential(_:)` converts the real one).
public struct AppleCredential: Sendable, Hashable {
    /// Apple's stable user identifier: the identity token's `sub`.
    public var user: String
    /// The identity token (a JWS), as text.
    public var identityToken: String
    /// The one-time authorization code, which the server exchanges at Apple.
    public var authorizationCode: String?
    /// Given by Apple only on the first authorization of this app.
    public var fullName: PersonName?
    /// Given by Apple only on the first authorization of this app.
    public var email: String?
    public var realUserStatus: RealUserStatus?

    public enum RealUserStatus: String, Sendable, Hashable, Codable {
        case unsupported, unknown, likelyReal = "likely_real"
    }

    public init(
        user: String, identityToken: String, authorizationCode: String? = nil, fullName: PersonName? = nil, email: String? = nil,
        realUserStatus: RealUserStatus? = nil
    ) {
        self.user = user
        self.identityToken = identityToken
        self.authorizationCode = authorizationCode
        self.fullName = fullName
        self.email = email
        self.realUserStatus = realUserStatus
    }

    /// The one-time name and email, when Apple gave any.
    var profile: PendingProfile? {
        let name = fullName.flatMap { $0.isEmpty ? nil : $0 }
        let email = email.flatMap { $0.isEmpty ? nil : $0 }
        guard name != nil || email != nil else { return nil }
        return PendingProfile(appleUserID: user, name: name, email: email)
    }
}
