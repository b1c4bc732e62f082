import AppleClient
import JOSE
import JSON
import Logging
import Store

/// Apple's server-to-server notifications (docs/reference/http-api.md): verified like an identity token, each
/// event applied and the `jti` recorded in one transaction, so a redelivery changes nothing
/// and the 200 is sent only after the effect is on disk.
package struct NotificationProcessor: Sendable {
    /// A delivery refused as it is: Apple's retries would bring the same bytes.
    package enum Refusal: Error {
        case malformed
        case invalidToken(TokenFailure)
    }

    package let store: Store
    package let keys: KeySetCache
    package let audiences: Set<String>?
    package let metrics: AccountMetrics
    package let logger: Logger
    package let clock: @Sendable () -> Int64

    /// Verifies a delivery (its JSON body) and applies its events; the delivery's outcome. A
    /// storage failure is thrown as it is: not 200, so Apple retries, and the transaction left
    /// nothing behind.
    package func process(_ delivery: [UInt8], requestID: String) async throws -> NotificationOutcome {
        guard let body = try? JSONParser.parse(delivery).object, let payload = body["payload"]?.string else {
            throw Refusal.malformed
        }
        let verified: TokenVerifier.Verified
        do {
            verified = try await verify(payload)
        } catch {
            metrics.apple.verificationFailed(reason: error.rawValue)
            metrics.notifications.record(type: "unknown", outcome: "invalid")
            logger.notice("notification refused", metadata: ["reason": .string(error.rawValue), "request_id": .string(requestID)])
            throw Refusal.invalidToken(error)
        }
        // `verify` guarantees both for notifications.
        let jti = verified.claims.tokenID ?? ""
        let events = verified.claims.events ?? []
        let now = clock()
        let (status, outcomes) = try await store.applyNotification(events.map(Self.accountEvent), jti: jti, now: now)
        for (event, outcome) in zip(events, outcomes) {
            metrics.notifications.record(type: Self.typeLabel(event.type), outcome: outcome.rawValue)
            if outcome == .ignored {
                logger.info("notification event ignored", metadata: [
                    "type": .string(String(event.type.prefix(40))), "jti": .string(jti), "request_id": .string(requestID),
                ])
            }
        }
        return status
    }

    private func verify(_ payload: String) async throws(TokenFailure) -> TokenVerifier.Verified {
        try await keys.verify(payload, policy: .init(kind: .notification, audiences: audiences), now: clock())
    }

    package static func accountEvent(_ event: AppleEvent) -> AccountEvent {
        let kind: AccountEvent.Kind =
            switch event.type {
            case "email-disabled": .emailDisabled
            case "email-enabled": .emailEnabled
            case "consent-revoked": .consentRevoked
            // Apple's docs say account-deleted; real deliveries say account-delete (APPLE.md §7).
            case "account-delete", "account-deleted": .accountDeleted
            default: .other
            }
        return AccountEvent(kind: kind, subject: event.subject, email: event.email, isPrivateEmail: event.isPrivateEmail)
    }

    /// Metric label: the four types (and the docs' spelling), everything else `unknown`.
    package static func typeLabel(_ type: String) -> String {
        ["email-disabled", "email-enabled", "consent-revoked", "account-delete", "account-deleted"].contains(type) ? type : "unknown"
    }

    package init(store: Store, keys: KeySetCache, audiences: Set<String>?, metrics: AccountMetrics, logger: Logger, clock: @escaping @Sendable () -> Int64) {
        self.store = store
        self.keys = keys
        self.audiences = audiences
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }
}
