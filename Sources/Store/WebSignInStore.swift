import OpenSSLCrypto
import SQLRow
import WireFormat

/// A redirect to Apple that is waiting for its callback.
public struct PendingWebSignIn: Sendable, Equatable {
    public let nonce: String
    public let returnTo: String
    public let expiresAt: Int64
    /// The app's S256 PKCE challenge when this sign-in returns to an app (docs/guides/connecting-your-backend.md).
    public let codeChallenge: String?
    /// "Add Sign in with Apple" (docs/guides/passwords-and-email.md): the session that started it, whose user the Apple
    /// ID is linked to. Apple's callback is a cross-site POST, which carries no session cookie.
    public let linkSessionID: String?
    /// SHA-256 of the binding cookie that was set with the redirect.
    let bindingHash: [UInt8]

    /// Whether `cookie` is the binding cookie this sign-in was started with.
    public func isBound(to cookie: String?) -> Bool {
        guard let cookie, !cookie.isEmpty else { return false }
        return SHA256.hash(Array(cookie.utf8)) == bindingHash
    }
}

/// The web flow's state (docs/reference/http-api.md): each `GET /auth/apple/login` stores a state, the
/// browser's binding cookie and the nonce for ten minutes; the callback uses the state up,
/// whatever its outcome. Only SHA-256 hashes of the state and the cookie are stored.
public struct WebSignInStore: Sendable {
    public static let lifetime: Int64 = 600

    private let engine: any StoreEngine

    init(engine: any StoreEngine) {
        self.engine = engine
    }

    /// A new sign-in: random state, binding cookie value and nonce (256 bits each, base64url).
    public struct Started: Sendable {
        public let state: String
        public let binding: String
        public let nonce: String
        public let expiresAt: Int64
    }

    public func start(returnTo: String, codeChallenge: String? = nil, linkSessionID: String? = nil, now: Int64) async throws -> Started {
        let started = Started(
            state: Base64.url.encode(SecureRandom.bytes(32)), binding: Base64.url.encode(SecureRandom.bytes(32)),
            nonce: Base64.url.encode(SecureRandom.bytes(32)), expiresAt: now + Self.lifetime)
        try await engine.write { connection in
            _ = try connection.run(
                """
                INSERT INTO web_sign_ins(state_hash, binding_hash, nonce, return_to, code_challenge, link_session_id, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [.blob(SHA256.hash(Array(started.state.utf8))), .blob(SHA256.hash(Array(started.binding.utf8))),
                 .text(started.nonce), .text(returnTo), codeChallenge.map(SQLValue.text) ?? .null,
                 linkSessionID.map(SQLValue.text) ?? .null, .integer(started.expiresAt)])
        }
        return started
    }

    public enum Consumed: Sendable, Equatable {
        case found(PendingWebSignIn)
        case unknown
        case expired
    }

    /// Uses the state up (it is deleted whatever the caller does next) and returns what it held.
    public func consume(state: String, now: Int64) async throws -> Consumed {
        guard !state.isEmpty, state.utf8.count <= 512 else { return .unknown }
        let hash = SHA256.hash(Array(state.utf8))
        return try await engine.write { connection in
            guard let row = try connection.queryOne(
                "DELETE FROM web_sign_ins WHERE state_hash = ? RETURNING binding_hash, nonce, return_to, code_challenge, link_session_id, expires_at",
                [.blob(hash)])
            else { return .unknown }
            let pending = PendingWebSignIn(
                nonce: try row.string("nonce"), returnTo: try row.string("return_to"), expiresAt: try row.int64("expires_at"),
                codeChallenge: try row.optionalString("code_challenge"), linkSessionID: try row.optionalString("link_session_id"),
                bindingHash: try row.blob("binding_hash"))
            return pending.expiresAt > now ? .found(pending) : .expired
        }
    }

    /// Deletes sign-ins whose ten minutes are over; returns how many.
    @discardableResult
    public func prune(now: Int64) async throws -> Int {
        try await engine.write { try Self.prune(in: $0, now: now) }
    }

    static func prune(in connection: any SQLConnection, now: Int64) throws -> Int {
        try connection.run("DELETE FROM web_sign_ins WHERE expires_at <= ?", [.integer(now)])
    }
}
