import OpenSSLCrypto
import SQLRow
import WireFormat

/// A user's Apple refresh and access tokens, as opened from the vault.
public struct AppleTokens: Sendable, Equatable {
    /// The client id (bundle ID or Services ID) the tokens were issued to; revocation and
    /// re-validation must use it.
    public var clientID: String
    public var refreshToken: String?
    public var accessToken: String?
    public var updatedAt: Int64
    /// When the refresh token was last re-validated with Apple.
    public var validatedAt: Int64?

    public init(clientID: String, refreshToken: String?, accessToken: String?, updatedAt: Int64, validatedAt: Int64? = nil) {
        self.clientID = clientID
        self.refreshToken = refreshToken
        self.accessToken = accessToken
        self.updatedAt = updatedAt
        self.validatedAt = validatedAt
    }
}

/// Apple tokens at rest (`apple_tokens`), sealed with AES-256-GCM. The associated data names
/// the column and the user, so a sealed value copied to another user's row (or swapped
/// between the refresh and access columns) does not open.
public struct AppleTokenVault: Sendable {
    private let engine: any StoreEngine
    private let cipher: AESGCM

    /// - Parameter key: the 32-byte `data_key`.
    init(engine: any StoreEngine, key: [UInt8]) throws {
        self.engine = engine
        self.cipher = try AESGCM(key: key)
    }

    static func associatedData(_ kind: TokenKind, userID: String) -> [UInt8] {
        Array("apple_tokens.\(kind.rawValue)\u{0}\(userID)".utf8)
    }

    private func seal(_ token: String?, _ kind: TokenKind, userID: String) throws -> SQLValue {
        guard let token else { return .null }
        return .blob(try cipher.seal(Array(token.utf8), associatedData: Self.associatedData(kind, userID: userID)))
    }

    private func open(_ sealed: [UInt8]?, _ kind: TokenKind, userID: String) throws -> String? {
        guard let sealed else { return nil }
        return String(decoding: try cipher.open(sealed, associatedData: Self.associatedData(kind, userID: userID)), as: UTF8.self)
    }

    /// Stores the tokens of `userID` in the caller's transaction. A nil refresh token keeps
    /// the stored one when the client id is unchanged (Apple's refresh grant returns none).
    package func store(
        in connection: any SQLConnection, userID: String, clientID: String, refreshToken: String?, accessToken: String?, now: Int64
    ) throws {
        try Self.upsert(
            in: connection, userID: userID, clientID: clientID, refresh: try seal(refreshToken, .refresh, userID: userID),
            access: try seal(accessToken, .access, userID: userID), now: now
        )
    }

    public func store(userID: String, clientID: String, refreshToken: String?, accessToken: String?, now: Int64) async throws {
        // Sealed here rather than in the write body: the writer thread is shared by every write.
        let refresh = try seal(refreshToken, .refresh, userID: userID)
        let access = try seal(accessToken, .access, userID: userID)
        try await engine.write { connection in
            try Self.upsert(in: connection, userID: userID, clientID: clientID, refresh: refresh, access: access, now: now)
        }
    }

    private static func upsert(
        in connection: any SQLConnection, userID: String, clientID: String, refresh: SQLValue, access: SQLValue, now: Int64
    ) throws {
        try connection.run(
            """
            INSERT INTO apple_tokens(user_id, client_id, refresh_token, access_token, updated_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(user_id) DO UPDATE SET
                refresh_token = CASE WHEN excluded.refresh_token IS NULL AND apple_tokens.client_id = excluded.client_id
                    THEN apple_tokens.refresh_token ELSE excluded.refresh_token END,
                client_id = excluded.client_id,
                access_token = excluded.access_token,
                updated_at = excluded.updated_at,
                validation_due_at = NULL
            """,
            [.text(userID), .text(clientID), refresh, access, .integer(now)]
        )
    }

    /// The user's tokens, or nil when none are stored. Throws `CryptoError` when a value does
    /// not open (another key, another user's row, or tampering).
    public func load(userID: String) async throws -> AppleTokens? {
        try await engine.read { try load(userID: userID, in: $0) }
    }

    /// `load` inside a transaction, e.g. to hand the tokens to the revocation queue in the
    /// same transaction that deletes the account.
    package func load(userID: String, in connection: any SQLConnection) throws -> AppleTokens? {
        guard let row = try connection.queryOne(
            "SELECT client_id, refresh_token, access_token, updated_at, validated_at FROM apple_tokens WHERE user_id = ?",
            [.text(userID)]
        ) else { return nil }
        return AppleTokens(
            clientID: try row.string("client_id"),
            refreshToken: try open(row.optionalBlob("refresh_token"), .refresh, userID: userID),
            accessToken: try open(row.optionalBlob("access_token"), .access, userID: userID),
            updatedAt: try row.int64("updated_at"),
            validatedAt: try row.optionalInt64("validated_at")
        )
    }

    /// Forgets the user's tokens in the caller's transaction; returns whether there were any.
    @discardableResult
    package static func drop(userID: String, in connection: any SQLConnection) throws -> Bool {
        try connection.run("DELETE FROM apple_tokens WHERE user_id = ?", [.text(userID)]) > 0
    }

    @discardableResult
    public func drop(userID: String) async throws -> Bool {
        try await engine.write { try Self.drop(userID: userID, in: $0) }
    }
}
