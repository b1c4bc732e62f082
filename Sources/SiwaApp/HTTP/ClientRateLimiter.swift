import HTTPServer
import Synchronization

/// `rate_limit` on the routes that write for clients not signed in (docs/reference/http-api.md): a token bucket
/// per client, so one client cannot fill the database with login states and nonces.
///
/// A client is a `ClientKey`, as for the connection cap: an IPv6 client is its /64. The table
/// is bounded: when it is full, buckets that have refilled (their clients went quiet) are
/// dropped first.
final class ClientRateLimiter: Sendable {
    /// Whether the request may go on, or how many seconds to wait (`Retry-After`).
    enum Decision: Equatable {
        case allowed
        case limited(retryAfterSeconds: Int)
    }

    private struct Bucket {
        var tokens: Double
        var updatedAt: Double
    }

    private let capacity: Double
    private let refillPerSecond: Double
    private let maxClients: Int
    private let clock: @Sendable () -> Double
    private let buckets = Mutex<[ClientKey: Bucket]>([:])

    /// - Parameter clock: seconds on any monotonic scale; tests hold it.
    init(limit: RateLimit, maxClients: Int = 100_000, clock: @escaping @Sendable () -> Double = Clocks.system.monotonic) {
        capacity = Double(limit.requests)
        refillPerSecond = Double(limit.requests) / Double(limit.perSeconds)
        self.maxClients = maxClients
        self.clock = clock
    }

    func decide(clientAddress: String) -> Decision {
        let key = ClientKey(address: clientAddress)
        let now = clock()
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: capacity, updatedAt: now)
            bucket.tokens = min(capacity, bucket.tokens + max(0, now - bucket.updatedAt) * refillPerSecond)
            bucket.updatedAt = now
            let decision: Decision
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                decision = .allowed
            } else {
                // Less a nanosecond, so float error never turns an exact 1 s into 2.
                let wait = (1 - bucket.tokens) / refillPerSecond - 1e-9
                decision = .limited(retryAfterSeconds: max(1, Int(wait.rounded(.up))))
            }
            if buckets[key] == nil, buckets.count >= maxClients { prune(&buckets, now: now) }
            buckets[key] = bucket
            return decision
        }
    }

    var trackedClientCount: Int { buckets.withLock { $0.count } }

    /// Wraps a handler: past the limit, 429 `too_many_requests` with `Retry-After`, and the
    /// handler (and its database write) never runs.
    func guarding(trustedProxies: CIDRSet, _ handler: @escaping HTTPHandler) -> HTTPHandler {
        { [self] request in
            let client = ClientAddress.resolve(
                peer: request.remoteAddress, forwardedFor: request.headers.combinedValue("X-Forwarded-For"), trusted: trustedProxies)
            switch decide(clientAddress: client) {
            case .allowed: return try await handler(request)
            case .limited(let seconds): throw APIError.tooManyRequests(retryAfter: seconds)
            }
        }
    }

    /// Full buckets carry no state worth keeping; if every client is active, start afresh
    /// rather than grow without bound.
    private func prune(_ buckets: inout [ClientKey: Bucket], now: Double) {
        buckets = buckets.filter { $0.value.tokens + (now - $0.value.updatedAt) * refillPerSecond < capacity }
        if buckets.count >= maxClients { buckets.removeAll(keepingCapacity: true) }
    }
}
