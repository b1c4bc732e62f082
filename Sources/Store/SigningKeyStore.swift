import OpenSSLCrypto
import SQLRow

/// An access-token signing key as `signing_keys` keeps it.
public struct SigningKeyRecord: Sendable, Equatable {
    public let kid: String
    /// The private key as it was given to the store, opened with `data_key`; nil when it does
    /// not open (another `data_key`, or an altered row).
    public let privateKey: [UInt8]?
    /// The public JWK, as JSON text.
    public let publicJWK: String
    public let createdAt: Int64
    /// When the key stops (or stopped) signing: set by the rotation that replaces it, to the
    /// moment its successor starts. Nil while nothing replaces it.
    public let retiredAt: Int64?

    public init(kid: String, privateKey: [UInt8]?, publicJWK: String, createdAt: Int64, retiredAt: Int64?) {
        self.kid = kid
        self.privateKey = privateKey
        self.publicJWK = publicJWK
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }

    /// Whether the key still signs at `now`.
    public func isActive(at now: Int64) -> Bool { retiredAt.map { $0 > now } ?? true }

    /// The key that signs at `now`: of the keys not yet retired, the one retiring first. A
    /// rotation keeps the key it replaces signing until the new one has been published long
    /// enough (`activatesAt`, the replaced key's `retiredAt`), so every instance derives the
    /// same answer from the same rows. Not the oldest by `createdAt`: a rotation in the same
    /// second as the key it replaces would then leave the choice to the kids' order, and the
    /// new key could sign before it was published long enough.
    public static func signing(among keys: [SigningKeyRecord], at now: Int64) -> SigningKeyRecord? {
        // A loop rather than filter-then-min: this runs for every token issued.
        var found: SigningKeyRecord?
        for key in keys where key.isActive(at: now) {
            if let best = found, best.signingOrder <= key.signingOrder { continue }
            found = key
        }
        return found
    }

    /// Retiring first, then oldest; the kid only separates keys that agree on both.
    private var signingOrder: (Int64, Int64, String) { (retiredAt ?? .max, createdAt, kid) }
}

/// A key about to be stored. The caller makes it (the Store knows no key format): `privateKey`
/// is sealed, `publicJWK` kept as it is.
public struct NewSigningKey: Sendable {
    public let kid: String
    public let privateKey: [UInt8]
    public let publicJWK: String

    public init(kid: String, privateKey: [UInt8], publicJWK: String) {
        self.kid = kid
        self.privateKey = privateKey
        self.publicJWK = publicJWK
    }
}

/// The access-token signing keys (docs/guides/connecting-your-backend.md), shared by every instance through the database. The
/// private key is sealed with `data_key` (AES-256-GCM) bound to its kid, so a sealed key copied
/// under another kid does not open. Creation and rotation run under one lock per database, so
/// instances starting or rotating together end with one current key.
public struct SigningKeyStore: Sendable {
    /// How long a replaced key stays published after it stopped signing (docs/guides/connecting-your-backend.md: a day; an
    /// access token lives at most an hour).
    public static let retiredKeyLifetime: Int64 = 86_400

    private let engine: any StoreEngine
    private let cipher: AESGCM

    init(engine: any StoreEngine, key: [UInt8]) throws {
        self.engine = engine
        cipher = try AESGCM(key: key)
    }

    static func associatedData(kid: String) -> [UInt8] {
        Array("signing_keys.private_key\u{0}\(kid)".utf8)
    }

    /// The keys a token may still carry at `now`: every key not retired a day ago or more,
    /// oldest first.
    public func published(now: Int64) async throws -> [SigningKeyRecord] {
        try await engine.read { [self] in try published(now: now, in: $0) }
    }

    /// `published`, blocking: for start-up and the command line.
    public func publishedBlocking(now: Int64) throws -> [SigningKeyRecord] {
        try engine.readBlocking { try published(now: now, in: $0) }
    }

    private func published(now: Int64, in connection: any SQLConnection) throws -> [SigningKeyRecord] {
        try connection.query(
            """
            SELECT kid, private_key, public_jwk, created_at, retired_at FROM signing_keys
            WHERE retired_at IS NULL OR retired_at > ? ORDER BY created_at, kid
            """,
            [.integer(now - Self.retiredKeyLifetime)]
        ).map { row in
            let kid = try row.string("kid")
            return SigningKeyRecord(
                kid: kid, privateKey: try? cipher.open(try row.blob("private_key"), associatedData: Self.associatedData(kid: kid)),
                publicJWK: try row.string("public_jwk"), createdAt: try row.int64("created_at"), retiredAt: try row.optionalInt64("retired_at"))
        }
    }

    /// At start: stores `make()`'s key, signing at once, when no key is current (none, or every
    /// one retired); otherwise stores nothing and `make` is not called. Returns the kid stored.
    /// Blocking, so a server starts with a key or not at all.
    @discardableResult
    public func ensureCurrentBlocking(now: Int64, make: () throws -> NewSigningKey) throws -> String? {
        try engine.writeBlocking { connection in
            try Self.lock(connection)
            guard try connection.queryOne("SELECT kid FROM signing_keys WHERE retired_at IS NULL LIMIT 1") == nil else { return nil }
            let key = try make()
            try insert(key, now: now, in: connection)
            return key.kid
        }
    }

    /// Replaces the current key: `make()`'s key is stored and published at once, and the key it
    /// replaces keeps signing until `activatesAt` (or the latest retirement already set, if
    /// later), when it is retired. With
    /// `ifNewestCreatedAtOrBefore` (the periodic check), nothing happens unless the newest key was
    /// created at or before then, so instances checking together rotate once. Returns the new
    /// key's kid, or nil when nothing was due.
    @discardableResult
    public func rotate(
        now: Int64, activatesAt: Int64, ifNewestCreatedAtOrBefore cutoff: Int64? = nil,
        make: @escaping @Sendable () throws -> NewSigningKey
    ) async throws -> String? {
        try await engine.write { [self] connection in
            try rotate(now: now, activatesAt: activatesAt, ifNewestCreatedAtOrBefore: cutoff, make: make, in: connection)
        }
    }

    /// `rotate-signing-key` (docs/guides/connecting-your-backend.md): an operator rotating by hand usually has a reason (a
    /// key that leaked), so `make()`'s key signs at once instead of after a publication lead.
    /// Every other key still signing, or due to sign until later, is retired at `now` and stays
    /// published a day (`retiredKeyLifetime`); with `removingOlder`, every other key is deleted
    /// and leaves the JWKS at once. Returns the new kid, and the kids published before.
    public func replaceNowBlocking(
        now: Int64, removingOlder: Bool, make: () throws -> NewSigningKey
    ) throws -> (kid: String, replaced: [String]) {
        try engine.writeBlocking { connection in
            try Self.lock(connection)
            let key = try make()
            let before = try published(now: now, in: connection).map(\.kid)
            if removingOlder {
                try connection.run("DELETE FROM signing_keys")
            } else {
                // A retirement set later by a scheduled rotation is brought forward too: the key
                // it retires would otherwise go on signing until then, before the new one.
                try connection.run("UPDATE signing_keys SET retired_at = ? WHERE retired_at IS NULL OR retired_at > ?", [.integer(now), .integer(now)])
            }
            try insert(key, now: now, in: connection)
            return (key.kid, before)
        }
    }

    private func rotate(
        now: Int64, activatesAt: Int64, ifNewestCreatedAtOrBefore cutoff: Int64?, make: () throws -> NewSigningKey,
        in connection: any SQLConnection
    ) throws -> String? {
        try Self.lock(connection)
        if let cutoff {
            let newest = try connection.queryOne("SELECT MAX(created_at) AS newest FROM signing_keys WHERE retired_at IS NULL")?
                .optionalInt64("newest")
            if let newest, newest > cutoff { return nil }
        }
        let key = try make()
        // Never before a retirement already set: `activatesAt` is the caller's clock, and a
        // rotation from a clock running behind the last one's would otherwise retire the key it
        // replaces first, and that key's successor, published only now, would sign at once.
        let latest = try connection.queryOne("SELECT MAX(retired_at) AS latest FROM signing_keys")?.optionalInt64("latest")
        let activatesAt = max(activatesAt, latest ?? activatesAt)
        // Normally one row; should several be current, they all make way for the new key.
        try connection.run("UPDATE signing_keys SET retired_at = ? WHERE retired_at IS NULL", [.integer(activatesAt)])
        try insert(key, now: now, in: connection)
        return key.kid
    }

    /// Deletes the keys retired a day or more before `now` (housekeeping); returns how many went.
    static func prune(in connection: any SQLConnection, now: Int64) throws -> Int {
        try connection.run(
            "DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at <= ?", [.integer(now - retiredKeyLifetime)])
    }

    private func insert(_ key: NewSigningKey, now: Int64, in connection: any SQLConnection) throws {
        let sealed = try cipher.seal(key.privateKey, associatedData: Self.associatedData(kid: key.kid))
        try connection.run(
            "INSERT INTO signing_keys(kid, private_key, public_jwk, created_at) VALUES (?, ?, ?, ?)",
            [.text(key.kid), .blob(sealed), .text(key.publicJWK), .integer(now)])
    }

    /// SQLite's single writer already runs key changes one at a time, across processes too
    /// (`BEGIN IMMEDIATE`). PostgreSQL's instances take a transaction-scoped advisory lock, which
    /// a row lock cannot replace: there is no row to lock before the first key exists.
    private static func lock(_ connection: any SQLConnection) throws {
        guard connection.dialect == .postgres else { return }
        try connection.run("SELECT pg_advisory_xact_lock(?)", [.integer(lockKey)])
    }

    static let lockKey = PostgresEngine.advisoryLockKey("siwa-signing-keys")
}
