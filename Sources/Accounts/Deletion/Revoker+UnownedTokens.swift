import Store
import WireFormat

/// Tokens Apple issued that belong to nobody here: a sign-in refused, or not stored, after its
/// code was exchanged (docs/reference/http-api.md). They are revoked whatever else failed.
extension Revoker {
    /// Queues the revocation in the durable queue, whose worker revokes it. The queue is in the
    /// database, which may be the very thing that failed the sign-in: then one attempt is made
    /// at Apple at once (within the failing request, bounded by the Apple client's deadlines),
    /// and if Apple cannot be reached either, the token is held in memory until the database
    /// takes writes again (`queueHeld`, every second). Only a process that ends before then
    /// loses it.
    package func revokeUnowned(_ token: String, kind: TokenKind, clientID: String, now: Int64, requestID: String) async {
        let queueFailure: any Error
        do {
            try await store.queueRevocation(clientID: clientID, token: token, kind: kind, now: now)
            return
        } catch {
            queueFailure = error
        }
        var appleFailure = "team credentials not configured"
        if let api {
            do {
                try await api.revoke(token, kind: kind, clientID: clientID)
                logger.warning("tokens of a failed sign-in could not be queued; Apple revoked them at once", metadata: [
                    "error": "\(queueFailure)", "request_id": .string(requestID),
                ])
                return
            } catch {
                appleFailure = error.outcome
            }
        }
        let kept = held.hold(HeldRevocations.Held(clientID: clientID, token: token, kind: kind, since: now))
        logger.error(
            kept
                ? "tokens of a failed sign-in could be neither queued nor revoked; held until the database returns"
                : "tokens of a failed sign-in could be neither queued nor revoked, and too many are held: dropped",
            metadata: ["error": "\(queueFailure)", "apple": .string(appleFailure), "request_id": .string(requestID)])
    }

    /// Writes the held revocations into the durable queue, in order, while the database takes
    /// them; those it does not take yet stay held.
    package func queueHeld() async {
        let held = self.held.takeAll()
        for (index, revocation) in held.enumerated() {
            do {
                try await store.queueRevocation(clientID: revocation.clientID, token: revocation.token, kind: revocation.kind, now: revocation.since)
            } catch {
                self.held.settle(taken: held.count, notQueued: Array(held[index...]))
                return
            }
        }
        self.held.settle(taken: held.count, notQueued: [])
    }
}
