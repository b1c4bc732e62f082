#if canImport(AuthenticationServices)
import AuthenticationServices
import Foundation

extension AppleCredential {
    /// The credential Apple handed to the app after a successful `ASAuthorizationController`
    /// request; nil when it carries no identity token (Apple documents it as optional).
    public init?(_ credential: ASAuthorizationAppleIDCredential) {
        guard let tokenData = credential.identityToken, let token = String(data: tokenData, encoding: .utf8) else { return nil }
        let name = credential.fullName.map { PersonName(given: $0.givenName, family: $0.familyName) }
        let status: RealUserStatus? =
            switch credential.realUserStatus {
            case .likelyReal: .likelyReal
            case .unknown: .unknown
            case .unsupported: .unsupported
            @unknown default: nil
            }
        self.init(
            user: credential.user, identityToken: token,
            authorizationCode: credential.authorizationCode.flatMap { String(data: $0, encoding: .utf8) },
            fullName: name.flatMap { $0.isEmpty ? nil : $0 }, email: credential.email, realUserStatus: status)
    }
}
#endif
