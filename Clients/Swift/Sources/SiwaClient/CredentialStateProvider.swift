/// Asks Apple about an Apple ID's authorization: `ASAuthorizationAppleIDProvider` on Apple
/// platforms (`AppleIDCredentialStateProvider`), a stand-in in tests.
public protocol CredentialStateProvider: Sendable {
    func credentialState(forUserID userID: String) async throws -> AppleCredentialState
    /// Yields each time Apple says a credential was revoked
    /// (`ASAuthorizationAppleIDProvider.credentialRevokedNotification`).
    func revocations() -> AsyncStream<Void>
}
