import HTTPServer
import Store
import WireFormat

/// Finds the session of a request: `Authorization: Bearer <token>` or the `siwa_session`
/// cookie (docs/reference/http-api.md). One indexed read; `last_seen_at` is written in batches.
struct SessionAuthenticator: Sendable {
    struct Authenticated: Sendable {
        /// By reference, as the session cache holds it: most routes read a field or two.
        let live: LiveSession
        var session: SessionRecord { live.session }
        var user: UserRecord { live.user }
        /// True when the cookie, not a bearer token, carried the session: state-changing
        /// requests must then come from our own origin (CSRF).
        let viaCookie: Bool
    }

    let sessions: SessionStore
    let batcher: LastSeenBatcher
    let idleTTL: Int64
    let publicOrigin: String
    /// `cors_origins`: web apps on other origins whose cookie-authenticated changes are let in.
    let crossOrigins: Set<String>
    let clock: @Sendable () -> Int64
    /// `trusted_proxies`: whose `X-Forwarded-For` names the client of an audit event.
    var trustedProxies = CIDRSet()

    /// What a cookie-authenticated request must show of where it came from.
    enum OriginCheck: Sendable {
        /// Reads: nothing.
        case notChecked
        /// `/api/*` changes (docs/reference/http-api.md, docs/guides/connecting-your-app.md): `Origin` equal to `public_url`'s or listed in
        /// `cors_origins`.
        case ours
        /// The account page's forms: our origin, or the opaque `null` that browsers send for
        /// every form POST from a page with `Referrer-Policy: no-referrer` (which every one of
        /// our pages sends). A foreign origin is still refused; the CSRF token is the proof.
        case oursOrOpaque
    }

    /// The request has no live session, or a cookie one from a foreign origin. A database fault
    /// is not a refusal: it is thrown as it is (503 when the database cannot be reached).
    enum Refusal: Error {
        case unauthenticated
        case forbidden
    }

    nonisolated(nonsending) func authenticate(_ request: HTTPRequest, origin check: OriginCheck) async throws -> Authenticated {
        let now = clock()
        let (token, viaCookie) = Self.credentials(of: request)
        guard let token, let found = try await sessions.live(token: token, now: now, idleTTL: idleTTL, recentUse: batcher.lastUse(of:))
        else { throw Refusal.unauthenticated }
        return try accept(found, viaCookie: viaCookie, request: request, origin: check, now: now)
    }

    /// `authenticate` without waiting: nil when the answer needs the database (the session is
    /// not in memory, or looks idle there), for the caller to `authenticate` instead.
    func authenticateImmediately(_ request: HTTPRequest, origin check: OriginCheck) throws -> Authenticated? {
        let now = clock()
        let (token, viaCookie) = Self.credentials(of: request)
        guard let token else { throw Refusal.unauthenticated }
        switch sessions.liveInMemory(token: token, now: now, idleTTL: idleTTL) {
        case .unknown: return nil
        case .notLive: throw Refusal.unauthenticated
        case .live(let found): return try accept(found, viaCookie: viaCookie, request: request, origin: check, now: now)
        }
    }

    /// The session token a request carries (a bearer token before the cookie), and whether the
    /// cookie carried it; nil for none or an empty one.
    private static func credentials(of request: HTTPRequest) -> (token: Substring?, viaCookie: Bool) {
        if let authorization = request.headers["Authorization"], let bearer = bearerCredentials(authorization) {
            return (bearer.isEmpty ? nil : bearer, false)
        }
        if let cookie = SessionCookies.read(SessionCookies.sessionName, from: request), !cookie.isEmpty {
            return (cookie[...], true)
        }
        return (nil, false)
    }

    /// The checks after a live session is found: the origin of a cookie's request, then the
    /// use recorded for `last_seen_at`.
    private func accept(_ found: LiveSession, viaCookie: Bool, request: HTTPRequest, origin check: OriginCheck, now: Int64) throws -> Authenticated {
        if viaCookie {
            let origin = request.headers["Origin"]
            switch check {
            case .notChecked: break
            case .ours: if origin != publicOrigin, !(origin.map(crossOrigins.contains) ?? false) { throw Refusal.forbidden }
            case .oursOrOpaque: if origin != publicOrigin, origin != "null" { throw Refusal.forbidden }
            }
        }
        // `last_seen_at` is bookkeeping: the batch is written off the request path (a busy
        // database must not hold this request), and a failed write refuses no live session.
        if found.isFirstUse(at: now), batcher.record(found.session.id, at: now) {
            Task { [batcher] in try? await batcher.flush(now: now) }
        }
        return Authenticated(live: found, viaCookie: viaCookie)
    }

    /// What follows `Bearer ` (any case, RFC 9110 §11.1) without HTTP whitespace around it,
    /// or nil for another scheme. Bytewise: this runs before every forwarded request.
    static func bearerCredentials(_ authorization: String) -> Substring? {
        let utf8 = authorization.utf8
        // `| 0x20` maps only A-Z onto the lowercase letters compared with; then exactly a space.
        guard utf8.count > 6, utf8.prefix(6).elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 }),
              utf8.dropFirst(6).first == UInt8(ascii: " ")
        else { return nil }
        return Substring(utf8.dropFirst(7)).trimmingHTTPWhitespace()
    }
}
