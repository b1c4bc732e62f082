import Glibc
import Synchronization

/// The session cache of instances sharing PostgreSQL. An entry holds what a read found; the
/// database's triggers NOTIFY every change to a session or user row, whichever instance made
/// it, and the listener drops the matching entries (docs/guides/postgresql.md: ended everywhere within a
/// second). While the listener is not connected nothing is served from memory, since
/// notifications may be missed; on every (re)connection the cache starts empty.
///
/// This instance's own writes are seen by its very next read, as on SQLite: the listener hears
/// a write's notifications some time after its COMMIT returns, so a write that commits while
/// entries are held sends a marker (`w:<instance>:<n>`) with its COMMIT, last in its
/// transaction, and from its return until the marker is heard nothing is served from memory;
/// PostgreSQL delivers a transaction's notifications in the order they were sent, so once the
/// listener hears the marker it has dropped whatever that write changed. Serving goes on while
/// the COMMIT runs (the write has not returned: a read then is concurrent with it, and any copy
/// it stores of the old row goes with the write's own notification, before the marker). The
/// marker goes only if the write changed a row the triggers announce (they set
/// `changedSetting` in its transaction): a write that touched no session or user row (a
/// worker's claim that found nothing due, a batch of last-seen times) never stops serving.
///
/// A listener can also go silent while still connected (its server process stalled, the
/// network half-open): it confirms its connection every `confirmationInterval`, and once the
/// last confirmation is older than `confirmationLimit` nothing is served from memory until the
/// listener has reconnected, or confirms again, and the cache has started over (docs/guides/postgresql.md).
final class NotifiedSessionCache: Sendable {
    static let channel = "siwa_cache"

    /// How often the listener confirms its connection with a round trip.
    static let confirmationInterval = Duration.milliseconds(250)
    /// How old the last confirmation may be while entries are served.
    static let confirmationLimit = Duration.seconds(1)

    /// Time since an arbitrary origin; tests hold it. Read on every lookup, so by default a
    /// coarse clock, which the kernel serves from memory (no system call, whatever the clock
    /// source); its few milliseconds of resolution are nothing against the limit.
    typealias Clock = @Sendable () -> Duration

    static let coarseMonotonic: Clock = {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    private let now: Clock

    init(now: @escaping Clock = coarseMonotonic) {
        self.now = now
    }

    /// Set to `on` for the rest of a transaction by the triggers that announce a change
    /// (`PostgresSchema`, version 11).
    static let changedSetting = "siwa.cache_changed"
    /// The condition under which a write's marker is sent with its COMMIT.
    static let markerCondition = "current_setting('\(changedSetting)', true) = 'on'"

    /// Tells this cache's markers from other instances'.
    let instance = RecordID.make(prefix: "")

    /// Bounds memory; past it an arbitrary entry makes room (a later re-read, nothing worse).
    static let capacity = 10_000

    private struct State {
        var entries: [TokenHash: LiveSession] = [:]
        var hashBySession: [String: TokenHash] = [:]
        var hashesByUser: [String: Set<TokenHash>] = [:]
        /// Moves on every invalidation: a read that started before one is not stored, since
        /// it may hold what the invalidation was about.
        var generation: UInt64 = 0
        var listening = false
        /// When the listener last confirmed its connection (by `now`).
        var confirmedAt = Duration.zero
        /// Markers of this instance's returned writes not yet heard: nothing is served.
        var unheardWrites: Set<UInt64> = []
        /// Markers heard before their write's COMMIT returned: nothing to wait for then.
        var heardEarly: Set<UInt64> = []
        var nextWrite: UInt64 = 0
        /// Counts `clear`s: one between a marker's making and its COMMIT's return may have
        /// forgotten it as heard, or come with notifications missed (see `committed(with:)`).
        var clears: UInt64 = 0
        var outages = SessionCacheOutages()

        mutating func remove(_ tokenHash: TokenHash) {
            guard let entry = entries.removeValue(forKey: tokenHash) else { return }
            hashBySession[entry.session.id] = nil
            hashesByUser[entry.user.id]?.remove(tokenHash)
            if hashesByUser[entry.user.id]?.isEmpty == true { hashesByUser[entry.user.id] = nil }
        }

        mutating func clear(listening: Bool) {
            entries = [:]
            hashBySession = [:]
            hashesByUser = [:]
            generation &+= 1
            self.listening = listening
            // With the entries gone and older reads refused, no marker needs waiting for.
            unheardWrites = []
            heardEarly = []
            clears &+= 1
        }
    }

    private let state = Mutex(State())

    func lookup(_ tokenHash: TokenHash) -> LiveSession? {
        state.withLock { state in
            guard state.listening, state.unheardWrites.isEmpty, now() - state.confirmedAt <= Self.confirmationLimit else { return nil }
            return state.entries[tokenHash]
        }
    }

    /// Taken before a read; `store` keeps the result only if nothing was invalidated since.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// As below, for tests that bring records.
    func store(_ tokenHash: TokenHash, session: SessionRecord, user: UserRecord, readAt generation: UInt64) {
        store(tokenHash, live: LiveSession(session: session, user: user), readAt: generation)
    }

    func store(_ tokenHash: TokenHash, live: LiveSession, readAt generation: UInt64) {
        let (session, user) = (live.session, live.user)
        state.withLock { state in
            guard state.listening, state.generation == generation else { return }
            if state.entries.count >= Self.capacity, state.entries[tokenHash] == nil, let victim = state.entries.keys.first {
                state.remove(victim)
            }
            state.entries[tokenHash] = live
            state.hashBySession[session.id] = tokenHash
            state.hashesByUser[user.id, default: []].insert(tokenHash)
        }
    }

    /// The payload the database sends when user `id` changes.
    static func userPayload(_ id: String) -> String { "u:" + id }

    /// A notification's payload: `s:<session id>` or `u:<user id>` (see `PostgresSchema`), or
    /// a write's marker.
    func invalidate(_ payload: String) {
        state.withLock { state in
            if payload.hasPrefix("w:") {
                // A marker changes no row; another instance's is ignored.
                let marker = payload.dropFirst(2).split(separator: ":")
                if marker.count == 2, marker[0] == instance, let write = UInt64(marker[1]), state.unheardWrites.remove(write) == nil {
                    state.heardEarly.insert(write)
                }
                return
            }
            state.generation &+= 1
            let id = String(payload.dropFirst(2))
            if payload.hasPrefix("s:") {
                if let tokenHash = state.hashBySession[id] { state.remove(tokenHash) }
            } else if payload.hasPrefix("u:") {
                for tokenHash in state.hashesByUser[id] ?? [] { state.remove(tokenHash) }
            } else {
                state.clear(listening: state.listening)
            }
        }
    }

    /// Called when a write of this instance is about to commit (its statements done): the
    /// marker to send with the COMMIT, in the same transaction, so that it is heard after the
    /// write's own notifications. If the COMMIT sent it, `committed(with:)` must follow. Nil
    /// when nothing is held or served: nothing needs waiting for, but `forgetAll()` must follow
    /// the commit.
    func markerForCommit() -> CommitMarker? {
        state.withLock { state in
            guard state.listening, !state.entries.isEmpty else { return nil }
            state.nextWrite &+= 1
            return CommitMarker(payload: "w:\(instance):\(state.nextWrite)", write: state.nextWrite, clearsWhenMade: state.clears)
        }
    }

    /// A write's marker.
    struct CommitMarker: Sendable {
        let payload: String
        fileprivate let write: UInt64
        fileprivate let clearsWhenMade: UInt64
    }

    /// After a write whose COMMIT sent `marker`, before it returns: nothing is served from
    /// memory until the marker is heard (unless it was already). If the cache was cleared
    /// meanwhile, the marker may have been heard and forgotten, or lost with the listener's
    /// connection, and a read after the clear may hold the row as it was before this write:
    /// everything goes again instead, and reads begun before now are not kept.
    func committed(with marker: CommitMarker) {
        state.withLock { state in
            if state.clears != marker.clearsWhenMade {
                state.clear(listening: state.listening)
            } else if state.heardEarly.remove(marker.write) == nil {
                state.unheardWrites.insert(marker.write)
            }
        }
    }

    /// Everything goes, and reads that began before now are not kept. After a write that
    /// committed without a marker (such reads may hold what it changed), and after one whose
    /// marker will not be heard (its COMMIT failed, or its answer was lost).
    func forgetAll() { state.withLock { $0.clear(listening: $0.listening) } }

    /// Whether entries may be served: the listener is connected and listening.
    var isListening: Bool { state.withLock { $0.listening } }

    /// How often serving from memory stopped for the listener's sake (`/metrics`).
    var outages: SessionCacheOutages { state.withLock { $0.outages } }

    func listenerConnected() {
        state.withLock { state in
            state.clear(listening: true)
            state.confirmedAt = now()
        }
    }

    /// The listener's connection answered a round trip. After a silence past the limit,
    /// notifications may have been held up while entries were stored: everything goes.
    func listenerConfirmed() {
        state.withLock { state in
            let now = now()
            if now - state.confirmedAt > Self.confirmationLimit {
                state.clear(listening: state.listening)
                state.outages.unconfirmed += 1
            }
            state.confirmedAt = now
        }
    }

    func listenerLost() {
        state.withLock { state in
            // Each failed reconnection reports a loss too; one outage is counted.
            if state.listening { state.outages.disconnected += 1 }
            state.clear(listening: false)
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}

/// Times a PostgreSQL session cache stopped serving from memory because its listener could not
/// vouch for it; each one sends every cached read to the database until the cache refills.
public struct SessionCacheOutages: Sendable, Equatable {
    /// The listener's connection broke, or did not answer its round trip in time.
    public var disconnected = 0
    /// A round trip was answered, but later than `confirmationLimit` after the one before (or
    /// after the connection was made).
    public var unconfirmed = 0
}

extension NotifiedSessionCache: SessionCaching {
    func read(_ tokenHash: TokenHash, engine: any StoreEngine) async throws -> LiveSession? {
        let generation = self.generation
        guard let live = try await SessionStore.readUncached(tokenHash, engine: engine) else { return nil }
        store(tokenHash, live: live, readAt: generation)
        return live
    }

    /// The database's NOTIFY of the deletion drops it, here and on every instance.
    func forget(sessionID: String) {}

    /// The database's NOTIFY reaches this instance's listener a moment later; until then the
    /// entries would still be served here.
    func dropCached(userID: String) { invalidate(Self.userPayload(userID)) }

    /// Entries go by notification or age, not by sweeping.
    func sweep() -> Int { 0 }
}
