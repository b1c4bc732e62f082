import AppleClient
import HTTPServer
import JOSE
import JSON
import Logging
import SQLite
import Store

/// Apple's server-to-server notifications (SPEC §4): verified like an identity token, each
/// event applied and the `jti` recorded in one transaction, so a redelivery changes nothing
/// and the 200 is sent only after the effect is on disk.
struct NotificationProcessor: Sendable {
    enum Status: String, Sendable {
        case processed, duplicate, ignored
    }

    /// A delivery refused as it is: Apple's retries would bring the same bytes.
    enum Refusal: Error {
        case malformed
        case invalidToken(TokenFailure)
    }

    let database: Database
    let keys: KeySetCache
    let audiences: Set<String>?
    let metrics: Metrics
    let logger: Logger
    let clock: @Sendable () -> Int64

    /// A storage failure is thrown as it is: not 200, so Apple retries, and the transaction
    /// left nothing behind.
    func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let body = try? JSONParser.parse(request.body).object, let payload = body["payload"]?.string else {
            throw Refusal.malformed
        }
        let verified: TokenVerifier.Verified
        do {
            verified = try await verify(payload)
        } catch {
            metrics.apple.verificationFailed(reason: error.rawValue)
            metrics.notifications.record(type: "unknown", outcome: "invalid")
            logger.notice("notification refused", metadata: ["reason": .string(error.rawValue), "request_id": .string(request.requestID)])
            throw Refusal.invalidToken(error)
        }
        // `verify` guarantees both for notifications.
        let jti = verified.claims.tokenID ?? ""
        let events = verified.claims.events ?? []
        let now = clock()
        let (status, outcomes) = try await database.write { connection in
            try Self.apply(events, jti: jti, now: now, in: connection)
        }
        for (event, outcome) in zip(events, outcomes) {
            metrics.notifications.record(type: Self.typeLabel(event.type), outcome: outcome.rawValue)
            if outcome == .ignored {
                logger.info("notification event ignored", metadata: [
                    "type": .string(String(event.type.prefix(40))), "jti": .string(jti), "request_id": .string(request.requestID),
                ])
            }
        }
        return .json(200, #"{"status":""# + status.rawValue + #""}"#)
    }

    private func verify(_ payload: String) async throws(TokenFailure) -> TokenVerifier.Verified {
        try await keys.verify(payload, policy: .init(kind: .notification, audiences: audiences), now: clock())
    }

    /// Applies every event, inside the caller's transaction. With several events the status
    /// is `processed` when any was applied to a known user.
    static func apply(_ events: [AppleEvent], jti: String, now: Int64, in connection: Connection) throws -> (Status, [Status]) {
        if try NotificationLedger.status(jti: jti, in: connection) != nil {
            return (.duplicate, events.map { _ in .duplicate })
        }
        var outcomes: [Status] = []
        for event in events {
            outcomes.append(try applyOne(event, now: now, in: connection))
        }
        let status: Status = outcomes.contains(.processed) ? .processed : .ignored
        _ = try NotificationLedger.recordIfNew(jti: jti, status: status.rawValue, now: now, in: connection)
        return (status, outcomes)
    }

    private static func applyOne(_ event: AppleEvent, now: Int64, in connection: Connection) throws -> Status {
        guard let user = try UserStore.user(appleSub: event.subject, in: connection) else { return .ignored }
        switch event.type {
        case "email-disabled":
            _ = try UserStore.setEmailForwarding(in: connection, appleSub: event.subject, enabled: false, now: now)
        case "email-enabled":
            _ = try UserStore.setEmailForwarding(
                in: connection, appleSub: event.subject, enabled: true, email: event.email, isPrivateEmail: event.isPrivateEmail, now: now)
        case "consent-revoked":
            _ = try UserStore.markRevoked(in: connection, userID: user.id, now: now)
        // Apple's docs say account-deleted; real deliveries say account-delete (APPLE.md §7).
        case "account-delete", "account-deleted":
            // Apple has already invalidated the tokens: nothing to revoke, only to forget.
            _ = try UserStore.delete(in: connection, userID: user.id)
        default:
            return .ignored
        }
        return .processed
    }

    /// Metric label: the four types (and the docs' spelling), everything else `unknown`.
    static func typeLabel(_ type: String) -> String {
        ["email-disabled", "email-enabled", "consent-revoked", "account-delete", "account-deleted"].contains(type) ? type : "unknown"
    }
}
