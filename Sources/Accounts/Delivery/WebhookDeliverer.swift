import HTTPClient
import Logging
import Store

/// Delivers the webhook outbox to `webhook_url` (docs/guides/connecting-your-backend.md), in the background, never on a
/// request's path: POSTs signed in the Standard Webhooks format, 3 s to connect and 10 s in all
/// per attempt, 2xx accepted, anything else retried with back-off for `webhook_retention`.
///
/// Several users' events are in flight at once (at most `concurrency`); one user's are sent one
/// at a time, in order, since the queue hands out only a user's oldest event, leased. No
/// database connection is held while a receiver is waited on: the claim, and the outcome's
/// record, are transactions of their own on either side of the HTTP call. A receiver that
/// hangs holds one place for at most an attempt's 10 s, and the others go on.
package struct WebhookDeliverer: Sendable {
    package enum Outcome: String, Sendable {
        /// The receiver answered 2xx; the event is gone from the queue.
        case delivered
        /// Not accepted; tried again after a back-off.
        case retry
        /// Not accepted within `webhook_retention`; listed by `siwa-server webhooks failed`.
        case failed
    }

    package let queue: WebhookQueue
    package let http: HTTPClient
    package let url: String
    /// The decoded `webhook_secret`: the HMAC key.
    package let secret: [UInt8]
    /// `webhook_backoff`: the first retry's delay, doubled per attempt up to `maxBackoff`.
    package let backoff: Int64
    /// `webhook_retention`: how long after its change an event is still tried.
    package let retention: Int64
    package let concurrency: Int
    package let metrics: AccountMetrics
    package let logger: Logger
    package let clock: @Sendable () -> Int64
    /// How long a claim is this worker's (see `lease(deadline:)`).
    package var lease: Int64 = WebhookDeliverer.lease

    package static let maxBackoff: Int64 = 3_600
    package static let defaultConcurrency = 16
    /// How long a claimed event is this worker's: longer than an attempt can take (10 s) and its
    /// record, so two workers never send one event at once; an instance that dies mid-attempt
    /// leaves it to another (or to itself, restarted) once the lease has passed.
    package static let lease: Int64 = 30

    /// The lease for attempts of `deadline`: 20 s more than one can take.
    package static func lease(deadline: Duration) -> Int64 { max(lease, deadline.components.seconds + 20) }
    /// How often an idle worker looks for due events (a read; a claim only when one is due).
    package static let pollInterval: Duration = .milliseconds(250)

    /// An HTTP client of the deliverer's own, so receivers never take a thread or a pooled
    /// connection from the calls to Apple: docs/guides/connecting-your-backend.md's deadlines, a worker thread per place.
    package static func client(concurrency: Int, deadline: Duration = .seconds(10)) throws -> HTTPClient {
        try HTTPClient(configuration: HTTPClientConfiguration(
            connectTimeout: .seconds(3), totalTimeout: deadline, maxIdleConnectionsPerHost: concurrency, workerThreads: concurrency))
    }

    /// The request of one attempt: the stored body, signed with this attempt's timestamp.
    package func request(for event: WebhookEvent, timestamp: Int64) -> HTTPClientRequest {
        let body = Array(event.body.utf8)
        return HTTPClientRequest(
            method: "POST", url: url,
            headers: [
                ("Content-Type", "application/json"),
                ("webhook-id", event.id),
                ("webhook-timestamp", String(timestamp)),
                ("webhook-signature", WebhookSignature.sign(id: event.id, timestamp: timestamp, body: body, secret: secret)),
            ],
            body: body)
    }

    /// One attempt, and its outcome recorded in the queue, the metrics and the log (which names
    /// the event, never its body: that holds the user's email).
    @discardableResult
    package func attempt(_ event: WebhookEvent) async -> Outcome {
        let failure: String
        do {
            // Idempotent: a repeat is harmless (the receiver drops it by webhook-id), so a
            // request that met a stale keep-alive connection is sent again on a fresh one.
            let response = try await http.send(request(for: event, timestamp: clock()), idempotent: true)
            if (200..<300).contains(response.status) {
                metrics.webhooks.record(type: event.type, outcome: Outcome.delivered.rawValue)
                logger.info("webhook delivered", metadata: metadata(event, ["status": .stringConvertible(response.status)]))
                do {
                    try await queue.markDelivered(id: event.id)
                } catch {
                    // Delivered but still queued: sent again after the lease, a harmless repeat.
                    logger.warning("webhook delivered but not removed from the queue", metadata: metadata(event, ["error": "\(error)"]))
                }
                return .delivered
            }
            failure = "HTTP \(response.status)"
        } catch {
            // The client's descriptions name the host and the reason only, never a header or body.
            failure = error.description
        }
        let now = clock()
        let delay = RetryBackoff.delay(attempt: event.attempts + 1, base: backoff, max: Self.maxBackoff)
        let outcome: WebhookQueue.FailureOutcome
        do {
            outcome = try await queue.recordFailure(event, error: failure, now: now, retryDelay: delay, retention: retention)
        } catch {
            // Unrecorded: the lease runs out and the event is tried again.
            logger.warning("a failed webhook delivery could not be recorded", metadata: metadata(event, ["error": "\(error)"]))
            metrics.webhooks.record(type: event.type, outcome: Outcome.retry.rawValue)
            return .retry
        }
        switch outcome {
        case .retrying(let at):
            metrics.webhooks.record(type: event.type, outcome: Outcome.retry.rawValue)
            logger.info("webhook not accepted; will retry", metadata: metadata(event, [
                "error": .string(failure), "retry_in_seconds": .stringConvertible(at - now),
            ]))
            return .retry
        case .failed:
            metrics.webhooks.record(type: event.type, outcome: Outcome.failed.rawValue)
            logger.warning("webhook failed: not accepted within webhook_retention; `siwa-server webhooks retry` queues it again", metadata: metadata(event, [
                "error": .string(failure),
            ]))
            return .failed
        }
    }

    private func metadata(_ event: WebhookEvent, _ extra: Logger.Metadata) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "webhook_id": .string(event.id), "type": .string(event.type), "user_id": .string(event.userID),
            "attempt": .stringConvertible(event.attempts + 1),
        ]
        metadata.merge(extra) { $1 }
        return metadata
    }

    private enum Step: Sendable {
        case attempted
        case tick
    }

    /// Works the queue until cancelled. Due events are claimed for the free places and each
    /// attempted in a task of its own; after completions, claims wait until half the places
    /// are free (one claim for many events), or for the next tick. Attempts in flight when
    /// cancelled run to their own deadline.
    package func run() async {
        await withTaskGroup(of: Step.self) { group in
            var inFlight = 0
            var ticking = false
            var metricsUpdated = ContinuousClock.now - .seconds(2)
            var queueUnreadable = false
            while !Task.isCancelled {
                var claimed: [WebhookEvent] = []
                do {
                    claimed = try await claim(limit: concurrency - inFlight)
                    if queueUnreadable { logger.info("webhook delivery reads its queue again") }
                    queueUnreadable = false
                } catch {
                    // Once per outage, not every tick; the next tick tries again.
                    if !queueUnreadable { logger.warning("webhook delivery cannot read its queue", metadata: ["error": "\(error)"]) }
                    queueUnreadable = true
                }
                for event in claimed {
                    inFlight += 1
                    group.addTask {
                        await attempt(event)
                        return .attempted
                    }
                }
                if ContinuousClock.now - metricsUpdated >= .seconds(1) {
                    metricsUpdated = ContinuousClock.now
                    await updateMetrics()
                }
                if !ticking {
                    ticking = true
                    group.addTask {
                        try? await Task.sleep(for: Self.pollInterval)
                        return .tick
                    }
                }
                repeat {
                    guard let step = await group.next() else { break }
                    switch step {
                    case .attempted: inFlight -= 1
                    case .tick: ticking = false
                    }
                } while ticking && concurrency - inFlight < max(1, concurrency / 2) && !Task.isCancelled
            }
        }
    }

    /// Due events for up to `limit` places: a read first, so an idle worker does not write.
    private func claim(limit: Int) async throws -> [WebhookEvent] {
        guard limit > 0 else { return [] }
        let now = clock()
        guard try await queue.hasDue(now: now) else { return [] }
        return try await queue.claimDue(now: now, lease: lease, limit: limit)
    }

    private func updateMetrics() async {
        guard let (count, oldest) = try? await queue.depth() else { return }
        metrics.webhooks.update(depth: count, oldestAge: oldest.map { max(0, clock() - $0) } ?? 0)
    }

    package init(queue: WebhookQueue, http: HTTPClient, url: String, secret: [UInt8], backoff: Int64, retention: Int64, concurrency: Int, metrics: AccountMetrics, logger: Logger, clock: @escaping @Sendable () -> Int64, lease: Int64 = WebhookDeliverer.lease) {
        self.queue = queue
        self.http = http
        self.url = url
        self.secret = secret
        self.backoff = backoff
        self.retention = retention
        self.concurrency = concurrency
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.lease = lease
    }
}
