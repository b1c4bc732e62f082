import AppleClient
import Glibc
import Logging
import Store
import WireFormat

/// An account's deletion (`DELETE /api/account`, docs/reference/http-api.md): at once every session ends and the user can no longer
/// be read; the user's Apple token goes into the durable revocation queue in the same
/// transaction; one attempt is made within the request, bounded to 2 s, and the queue's worker
/// retries anything left until Apple accepts it.
package struct AccountDeletion: Sendable {
    package let store: Store
    package let revoker: Revoker
    package let clock: @Sendable () -> Int64

    /// How long the request waits for Apple before answering `pending`.
    package static let inRequestBound: Duration = .seconds(2)

    /// Deletes the user for `reason` and makes the first revocation attempt; the outcome at
    /// Apple (`done`, `pending`, or `none` when no Apple token was stored), or nil when there is
    /// no such user.
    package func delete(userID: String, reason: DeletionReason = .accountDeleted, audit: AuditContext = AuditContext(actor: .user)) async throws -> String? {
        let now = clock()
        // First due after the in-request attempt, so the worker does not race it.
        guard let deletion = try await store.deleteUser(userID: userID, reason: reason, now: now, firstAttemptAt: now + 3, audit: audit) else {
            return nil
        }
        guard let queued = deletion.revocation else { return "none" }
        let revoker = self.revoker
        let accepted = await withTaskGroup(of: Bool.self) { group -> Bool in
            group.addTask { await revoker.attempt(queued) }
            group.addTask {
                try? await Task.sleep(for: Self.inRequestBound)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        return accepted ? "done" : "pending"
    }

    package init(store: Store, revoker: Revoker, clock: @escaping @Sendable () -> Int64) {
        self.store = store
        self.revoker = revoker
        self.clock = clock
    }
}
