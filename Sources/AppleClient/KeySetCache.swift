import HTTPClient
import JOSE
import OpenSSLCrypto
import Synchronization

/// Where the last good JWKS document is kept, so verification survives Apple being
/// unreachable at start.
public protocol KeySetPersistence: Sendable {
    func loadKeySet() -> [UInt8]?
    func saveKeySet(_ document: [UInt8]) async
}

/// Apple's signing keys, by `kid`. Fetched at start (after loading the persisted copy),
/// refreshed at least every 24 h, and refetched on an unknown `kid` at most once a minute, with
/// one fetch in flight at a time however many requests are waiting. A successful fetch
/// replaces the set: a key Apple stopped publishing stops being accepted.
public final class KeySetCache: Sendable {
    public enum Source: String, Sendable {
        case none, persisted, fetched
    }

    private struct State {
        var keys: JSONWebKeySet?
        var source = Source.none
        var lastFetchAttempt: Double?
        var lastSuccess: Double?
        var lastUnknownKidRefetch: Double?
        var inFlight: Task<Bool, Never>?
    }

    public static let unknownKidCooldown: Double = 60
    public static let refreshInterval: Double = 24 * 3600
    /// While there are no keys at all, or the last fetch failed, retry this often.
    public static let retryInterval: Double = 30

    private let url: String
    private let http: HTTPClient
    private let persistence: (any KeySetPersistence)?
    private let observer: (any AppleCallObserver)?
    private let onRefresh: @Sendable (_ outcome: String) -> Void
    private let monotonic: @Sendable () -> Double
    private let state = Mutex(State())

    public init(
        url: String, http: HTTPClient, persistence: (any KeySetPersistence)?, observer: (any AppleCallObserver)? = nil,
        monotonic: @escaping @Sendable () -> Double, onRefresh: @escaping @Sendable (_ outcome: String) -> Void = { _ in }
    ) {
        self.url = url
        self.http = http
        self.persistence = persistence
        self.observer = observer
        self.monotonic = monotonic
        self.onRefresh = onRefresh
    }

    /// Loads the persisted copy, then fetches. The start-up fetch does not use up the
    /// unknown-kid allowance.
    @discardableResult
    public func load() async -> Bool {
        loadPersisted()
        return await refresh()
    }

    /// Takes the persisted copy, if any and if nothing fresher is loaded. Synchronous, so a
    /// server can be ready from its first request while Apple is unreachable.
    @discardableResult
    public func loadPersisted() -> Bool {
        guard let document = persistence?.loadKeySet(), let keys = try? JSONWebKeySet(json: document) else { return false }
        return state.withLock {
            guard $0.keys == nil else { return false }
            $0.keys = keys
            $0.source = .persisted
            return true
        }
    }

    public var isLoaded: Bool { state.withLock { $0.keys != nil } }
    public var source: Source { state.withLock { $0.source } }
    /// Seconds since Apple last served the keys to this process; nil before the first fetch
    /// (keys loaded from the persisted copy have no age this process can vouch for).
    public var secondsSinceFetched: Double? {
        let now = monotonic()
        return state.withLock { $0.lastSuccess.map { now - $0 } }
    }

    public var keyIDs: [String] { state.withLock { $0.keys.map { Array($0.keys.keys).sorted() } ?? [] } }

    /// The key for `kid` in the current set; no network.
    public func key(_ kid: String) -> RSAPublicKey? {
        state.withLock { $0.keys?[kid] }
    }

    /// The key for `kid`, refetching the set once if it is unknown and the last such refetch
    /// was over a minute ago. A flood of random kids costs at most one fetch a minute.
    public func keyRefetchingIfUnknown(_ kid: String) async -> RSAPublicKey? {
        if let key = key(kid) { return key }
        let now = monotonic()
        let allowed = state.withLock { state -> Bool in
            if state.inFlight != nil { return true }  // joining a fetch costs nothing extra
            if let last = state.lastUnknownKidRefetch, now - last < Self.unknownKidCooldown { return false }
            state.lastUnknownKidRefetch = now
            return true
        }
        guard allowed else { return nil }
        await refresh()
        return key(kid)
    }

    /// Fetches now, or joins the fetch already in flight. True when the set was replaced.
    @discardableResult
    public func refresh() async -> Bool {
        let task = state.withLock { state -> Task<Bool, Never> in
            if let inFlight = state.inFlight { return inFlight }
            let task = Task { await self.fetch() }
            state.inFlight = task
            return task
        }
        return await task.value
    }

    /// Seconds until the next scheduled refresh is due.
    public func secondsUntilRefreshDue() -> Double {
        let now = monotonic()
        return state.withLock { state in
            guard let lastSuccess = state.lastSuccess, state.keys != nil else {
                return max(0, (state.lastFetchAttempt ?? now - Self.retryInterval) + Self.retryInterval - now)
            }
            let failedSince = (state.lastFetchAttempt ?? 0) > lastSuccess
            let due = failedSince ? (state.lastFetchAttempt ?? now) + Self.retryInterval : lastSuccess + Self.refreshInterval
            return max(0, due - now)
        }
    }

    /// Keeps the set fresh until the task is cancelled.
    public func runRefreshLoop() async {
        while !Task.isCancelled {
            let wait = secondsUntilRefreshDue()
            if wait > 0 {
                try? await Task.sleep(for: .milliseconds(Int64(min(wait, 3600) * 1000)))
                continue
            }
            await refresh()
        }
    }

    private func fetch() async -> Bool {
        let started = monotonic()
        state.withLock { $0.lastFetchAttempt = started }
        let outcome: String
        var replaced = false
        do {
            let response = try await http.send(HTTPClientRequest(method: "GET", url: url, headers: [("Accept", "application/json")], body: []), idempotent: true)
            if response.status == 200, let keys = try? JSONWebKeySet(json: response.body) {
                state.withLock {
                    $0.keys = keys
                    $0.source = .fetched
                    $0.lastSuccess = monotonic()
                }
                await persistence?.saveKeySet(keys.document)
                outcome = "ok"
                replaced = true
            } else {
                outcome = response.status == 200 ? "invalid" : "unavailable"
            }
        } catch {
            outcome = "unavailable"
        }
        observer?.appleCall(endpoint: .keys, outcome: outcome, seconds: monotonic() - started)
        onRefresh(outcome)
        state.withLock { $0.inFlight = nil }
        return replaced
    }
}

extension KeySetCache {
    /// Verifies `token` with Apple's current keys. Only when its `kid` is unknown — Apple may
    /// have rotated — is the set refetched (at most once a minute) and the token checked again,
    /// so the common case parses the token once.
    public func verify(_ token: String, policy: TokenVerifier.Policy, now: Int64) async throws(TokenFailure) -> TokenVerifier.Verified {
        do {
            return try TokenVerifier.verify(token, keys: { self.key($0) }, policy: policy, now: now)
        } catch .unknownKey {
            guard let kid = (try? CompactJWS(token))?.keyID, await keyRefetchingIfUnknown(kid) != nil else { throw .unknownKey }
            return try TokenVerifier.verify(token, keys: { self.key($0) }, policy: policy, now: now)
        }
    }
}
