/// What a phone receives from `ASAuthorizationAppleIDCredential`: an authorization code and
/// an identity token issued to the app's bundle ID (`POST /sim/codes`).
public struct NativeCode: Sendable {
    public let code: String
    public let identityToken: String
    public let sub: String
}
