import Logging
import MailTemplates
import SMTP
import Store

/// Delivers the mail outbox through `smtp_url` (docs/guides/passwords-and-email.md), in the background, never on a
/// request's path: each claimed message is rendered in its user's language, sent over the one
/// connection the `SMTPClient` keeps, and its outcome recorded. Accepted: its row goes. A 5xx
/// to `RCPT TO`: failed at once (that address will not take it). Anything else (4xx, time-outs,
/// connection and TLS failures): retried from 5 s, doubling with jitter up to 15 minutes, for
/// `email_retention`, then failed. No database connection is held while the server is waited
/// on, and nothing secret (a code, the SMTP password) reaches the log, an error kept in the
/// queue, or a metric: SMTP errors name the step and the server's reply only.
package struct MailDeliverer: Sendable {
    package enum Outcome: String, Sendable {
        /// The server accepted the message; it is gone from the queue.
        case delivered
        /// Not accepted; tried again after a back-off.
        case retry
        /// Refused for good, or not accepted within `email_retention`; listed by `siwa-server
        /// email failed`.
        case failed
    }

    package let queue: MailQueue
    package let client: SMTPClient
    package let from: MailAddress
    /// `public_url`, where the links in codes' messages lead.
    package let publicURL: String
    /// `email_retention`: how long after its change a message is still tried.
    package let retention: Int64
    package let metrics: MailMetrics
    package let logger: Logger
    package let clock: @Sendable () -> Int64
    /// How long claimed messages are this worker's (see `lease`).
    package var lease: Int64 = MailDeliverer.lease

    package static let backoff: Int64 = 5
    package static let maxBackoff: Int64 = 900
    /// Messages claimed at once, sent one after another over the kept connection.
    package static let batch = 16
    /// Longer than a batch can take when the server answers (each step has 10 s, and after a
    /// failure that is the connection's the rest of the batch is not attempted), so two
    /// instances never send one message at once; one that dies mid-batch leaves its messages
    /// to another afterwards.
    package static let lease: Int64 = 300
    /// How often an idle worker looks for due messages (a read; a claim only when one is due).
    package static let pollInterval: Duration = .milliseconds(250)

    /// The message of `mail`: its kind's templates in its language, with the link of a code
    /// and times written out.
    package func message(for mail: QueuedMail) throws -> MailMessage {
        guard let kind = MailKind(rawValue: mail.kind) else { throw UnknownMailKind(kind: mail.kind) }
        var values = mail.values
        for key in ["expires_at", "when"] {
            if let seconds = values[key].flatMap(Int64.init) { values[key] = Self.readableTime(seconds) }
        }
        if let code = values["code"] {
            switch kind {
            case .verifyEmail: values["link"] = "\(publicURL)/verify-email?code=\(code)"
            case .passwordReset: values["link"] = "\(publicURL)/reset-password?code=\(code)"
            default: break
            }
        }
        let rendered = try MailTemplates.render(kind, language: Language(rawValue: mail.language) ?? .en, values: values)
        return try MailMessage(
            from: from, to: [try MailAddress(mail.recipient)], subject: rendered.subject, text: rendered.text, html: rendered.html,
            messageID: mail.messageID, date: clock())
    }

    /// `2026-11-28 03:00 UTC`.
    package static func readableTime(_ seconds: Int64) -> String {
        let stamp = RFC3339.format(seconds)
        return stamp.prefix(10) + " " + stamp.dropFirst(11).prefix(5) + " UTC"
    }

    /// One attempt, and its outcome recorded in the queue, the metrics and the log (which names
    /// the message, never its values). `connectionFailure` is the error when it is the
    /// server's or the connection's rather than this message's own, so the rest of a batch
    /// need not wait out the same time-outs.
    package func attempt(_ mail: QueuedMail) async -> (outcome: Outcome, connectionFailure: String?) {
        let message: MailMessage
        do {
            message = try self.message(for: mail)
        } catch {
            // A kind or an address this build cannot write: no attempt can succeed.
            return (await record(mail, failure: "cannot be written: \(error)", permanent: true), nil)
        }
        do throws(SMTPError) {
            try await client.send(message)
        } catch {
            let ownFailure = error.replyCode != nil && [.mailFrom, .recipient, .endOfData].contains(error.step)
            let outcome = await record(mail, failure: error.description, permanent: error.step == .recipient && error.isPermanent)
            return (outcome, ownFailure ? nil : error.description)
        }
        metrics.record(kind: mail.kind, outcome: Outcome.delivered.rawValue)
        logger.info("email delivered", metadata: metadata(mail, [:]))
        do {
            try await queue.markDelivered(id: mail.id)
        } catch {
            // Delivered but still queued: sent again after the lease (with the same
            // Message-ID, so a mail client shows it once).
            logger.warning("email delivered but not removed from the queue", metadata: metadata(mail, ["error": "\(error)"]))
        }
        return (.delivered, nil)
    }

    /// Records a failed attempt: retried after a back-off within `email_retention`, else (or
    /// at once when `permanent`) failed.
    package func record(_ mail: QueuedMail, failure: String, permanent: Bool) async -> Outcome {
        let now = clock()
        let delay = RetryBackoff.delay(attempt: mail.attempts + 1, base: Self.backoff, max: Self.maxBackoff)
        let outcome: OutboxFailureOutcome
        do {
            outcome = try await queue.recordFailure(mail, error: failure, now: now, retryDelay: delay, retention: retention, permanent: permanent)
        } catch {
            // Unrecorded: the lease runs out and the message is tried again.
            logger.warning("a failed email delivery could not be recorded", metadata: metadata(mail, ["error": "\(error)"]))
            metrics.record(kind: mail.kind, outcome: Outcome.retry.rawValue)
            return .retry
        }
        switch outcome {
        case .retrying(let at):
            metrics.record(kind: mail.kind, outcome: Outcome.retry.rawValue)
            logger.info("email not accepted; will retry", metadata: metadata(mail, [
                "error": .string(failure), "retry_in_seconds": .stringConvertible(at - now),
            ]))
            return .retry
        case .failed:
            metrics.record(kind: mail.kind, outcome: Outcome.failed.rawValue)
            logger.warning("email failed; `siwa-server email retry` queues it again", metadata: metadata(mail, ["error": .string(failure)]))
            return .failed
        }
    }

    private func metadata(_ mail: QueuedMail, _ extra: Logger.Metadata) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "email_id": .string(mail.id), "kind": .string(mail.kind), "attempt": .stringConvertible(mail.attempts + 1),
        ]
        if let userID = mail.userID { metadata["user_id"] = .string(userID) }
        metadata.merge(extra) { $1 }
        return metadata
    }

    /// Claims the due messages (up to a batch) and sends them in order. After a failure that
    /// is the connection's, the rest of the batch is recorded as failing the same way rather
    /// than each waiting out its own time-outs. Returns how many were claimed.
    @discardableResult
    package func deliverDue() async throws -> Int {
        let now = clock()
        guard try await queue.hasDue(now: now) else { return 0 }
        let claimed = try await queue.claimDue(now: now, lease: lease, limit: Self.batch)
        var connectionFailure: String?
        for mail in claimed {
            if let connectionFailure {
                _ = await record(mail, failure: connectionFailure, permanent: false)
            } else {
                connectionFailure = await attempt(mail).connectionFailure
            }
        }
        return claimed.count
    }

    /// Works the queue until cancelled; the kept connection is closed (`QUIT`) whenever the
    /// queue runs dry, so no idle connection is held open.
    package func run() async {
        var metricsUpdated = ContinuousClock.now - .seconds(2)
        var queueUnreadable = false
        var connected = false
        while !Task.isCancelled {
            var claimed = 0
            do {
                claimed = try await deliverDue()
                if queueUnreadable { logger.info("email delivery reads its queue again") }
                queueUnreadable = false
            } catch {
                if !queueUnreadable { logger.warning("email delivery cannot read its queue", metadata: ["error": "\(error)"]) }
                queueUnreadable = true
            }
            if ContinuousClock.now - metricsUpdated >= .seconds(1) {
                metricsUpdated = ContinuousClock.now
                if let (count, _) = try? await queue.depth() { metrics.update(depth: count) }
            }
            if claimed > 0 {
                connected = true
                continue
            }
            if connected {
                await client.close()
                connected = false
            }
            try? await Task.sleep(for: Self.pollInterval)
        }
        await client.close()
    }

    package init(queue: MailQueue, client: SMTPClient, from: MailAddress, publicURL: String, retention: Int64, metrics: MailMetrics, logger: Logger, clock: @escaping @Sendable () -> Int64, lease: Int64 = MailDeliverer.lease) {
        self.queue = queue
        self.client = client
        self.from = from
        self.publicURL = publicURL
        self.retention = retention
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.lease = lease
    }
}
