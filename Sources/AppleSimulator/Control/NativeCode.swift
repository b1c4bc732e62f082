/// What a phone receives from `ASAuthorizationAppleIDCredential`: an authorization code and
/// an identity token issued to the app's bundle ID (`POST /sim/codes`).
public struct NativeCode: Sendable {
    public let code: String
    public let identityToken: String
    /// The `sub` the token names: after the app moved to another team, the person's `sub` in
    /// that team, whichever team's `sub` the request named.
    public let sub: String
    /// Within 60 days of the app's transfer (APPLE.md §8).
    public let transferSub: String?
}
