/// What Apple says of an Apple ID's authorization for this app
/// (`ASAuthorizationAppleIDProvider.CredentialState`).
public enum AppleCredentialState: String, Sendable, Hashable, Codable {
    case authorized
    /// The person stopped using Sign in with Apple with this app: sign out.
    case revoked
    /// No such authorization on this device: sign out.
    case notFound
    /// The app moved to another developer team; the server's transfer handles it.
    case transferred

    /// The session must end.
    public var endsSession: Bool { self == .revoked || self == .notFound }
}
