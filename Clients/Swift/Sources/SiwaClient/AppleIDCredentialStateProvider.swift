#if canImport(AuthenticationServices)
import AuthenticationServices
import Foundation

/// Apple's own answer: `ASAuthorizationAppleIDProvider.getCredentialState(forUserID:)`, and its
/// credential-revoked notification.
public struct AppleIDCredentialStateProvider: CredentialStateProvider {
    public init() {}

    public func credentialState(forUserID userID: String) async throws -> AppleCredentialState {
        let state: ASAuthorizationAppleIDProvider.CredentialState = try await withCheckedThrowingContinuation { continuation in
            ASAuthorizationAppleIDProvider().getCredentialState(forUserID: userID) { state, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: state) }
            }
        }
        switch state {
        case .authorized: return .authorized
        case .revoked: return .revoked
        case .notFound: return .notFound
        case .transferred: return .transferred
        // A state this version does not know signs no one out.
        @unknown default: return .authorized
        }
    }

    public func revocations() -> AsyncStream<Void> {
        AsyncStream { continuation in
            let observer = NotificationCenter.default.addObserver(
                forName: ASAuthorizationAppleIDProvider.credentialRevokedNotification, object: nil, queue: nil
            ) { _ in continuation.yield() }
            // The observer token is not Sendable; it only ever goes back to NotificationCenter.
            nonisolated(unsafe) let token = observer
            continuation.onTermination = { _ in NotificationCenter.default.removeObserver(token) }
        }
    }
}
#endif
