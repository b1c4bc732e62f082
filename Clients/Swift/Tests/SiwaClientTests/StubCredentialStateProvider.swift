import Foundation
import SiwaClient

/// Apple's credential state as the test sets it, and a revocation notification it posts.
final class StubCredentialStateProvider: CredentialStateProvider, @unchecked Sendable {
    private let lock = NSLock()
    private var states: [String: AppleCredentialState] = [:]
    private var asked: [String] = []
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream<Void>.makeStream()
    }

    func set(_ state: AppleCredentialState, for userID: String) {
        lock.withLock { states[userID] = state }
    }

    /// The user IDs asked about, in order.
    var questions: [String] {
        lock.withLock { asked }
    }

    func postRevocation() { continuation.yield() }

    func credentialState(forUserID userID: String) async throws -> AppleCredentialState {
        lock.withLock {
            asked.append(userID)
            return states[userID] ?? .notFound
        }
    }

    func revocations() -> AsyncStream<Void> { stream }
}
