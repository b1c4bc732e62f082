import JOSE
import JSON
import Logging
import OpenSSLCrypto
import Store
import Synchronization

/// This instance's view of the access-token signing keys (docs/guides/connecting-your-backend.md), which live in the database
/// and are shared by every instance. The keys are held in memory and read again every
/// `refreshInterval`, so a rotation made by another instance (or by `rotate-signing-key`) is
/// seen within that time; the JWKS is rendered once per change, not per request.
///
/// A scheduled rotation publishes before it signs: the new key is published at once but the
/// old one keeps signing for `publicationLead`, longer than any instance takes to re-read the
/// keys plus the JWKS's `max-age`. By the time any instance signs with the new key, every
/// instance serves it in its JWKS and every verifier that honours `max-age` has fetched it.
/// `rotate-signing-key` is the exception (docs/guides/connecting-your-backend.md): its key signs at once, which is why the
/// keys are re-read often, not once a lead. Which key signs is derived from the rows
/// (`SigningKeyRecord.signing`), so every instance switches at the same moment by its own clock.
package final class AccessTokenKeys: Sendable {
    /// How often the keys are read again (one small query), and a rotation checked for: also
    /// how long a running instance may go on signing with a key `rotate-signing-key` replaced.
    package static let refreshInterval: Int64 = 5
    /// The JWKS's `Cache-Control: max-age`.
    package static let jwksMaxAge: Int64 = 300
    /// The `max-age` plus 30 s: more than a re-read, with room for instances' clocks to differ.
    package static let publicationLead: Int64 = jwksMaxAge + 30

    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        package init(description: String) {
            self.description = description
        }
    }

    /// The keys as last read. `records` are oldest first; `minters` hold the keys that open.
    private struct Snapshot: Sendable {
        package var records: [SigningKeyRecord]
        package var minters: [String: AccessTokenMinter]
        package var jwks: [UInt8]

        package init(records: [SigningKeyRecord], minters: [String: AccessTokenMinter], jwks: [UInt8]) {
            self.records = records
            self.minters = minters
            self.jwks = jwks
        }
    }

    private let store: SigningKeyStore
    private let rotation: Int64
    private let logger: Logger
    private let clock: @Sendable () -> Int64
    private let snapshot: Mutex<Snapshot>

    /// Makes the first key when there is none (one, however many instances start together),
    /// then reads the keys. Throws when the key that signs now does not open with `data_key`:
    /// a server that cannot sign must not start.
    package init(store: SigningKeyStore, rotation: Int64, logger: Logger, clock: @escaping @Sendable () -> Int64) throws {
        self.store = store
        self.rotation = rotation
        self.logger = logger
        self.clock = clock
        let now = clock()
        if let kid = try store.ensureCurrentBlocking(now: now, make: Self.makeKey) {
            logger.info("created the access-token signing key", metadata: ["kid": .string(kid)])
        }
        let records = try store.publishedBlocking(now: now)
        snapshot = Mutex(Self.snapshot(of: records, reusing: [:], logger: logger))
        _ = try minter(at: now)
    }

    /// A new P-256 key; its kid is its RFC 7638 thumbprint.
    @Sendable package static func makeKey() throws -> NewSigningKey {
        let key = try P256PrivateKey.generate()
        let jwk = try P256JSONWebKey(key.publicKey)
        let kid = jwk.thumbprint
        return NewSigningKey(kid: kid, privateKey: Array(try key.pem().utf8), publicJWK: JSONWriter.string(jwk.json(kid: kid)))
    }

    /// The minter of the key that signs at `now`.
    package func minter(at now: Int64) throws -> AccessTokenMinter {
        let (signing, minter) = snapshot.withLock { state -> (SigningKeyRecord?, AccessTokenMinter?) in
            let signing = SigningKeyRecord.signing(among: state.records, at: now)
            return (signing, signing.flatMap { state.minters[$0.kid] })
        }
        guard let signing else { throw Failure(description: "no access-token signing key is current") }
        guard let minter else {
            throw Failure(description: """
                the access-token signing key \(signing.kid) cannot sign: it does not open with this data_key (every instance must \
                share one), or its published JWK is not its own
                """)
        }
        return minter
    }

    /// `{"keys":[…]}`: every key a token may still carry.
    package var jwks: [UInt8] { snapshot.withLock { $0.jwks } }

    /// The kids in the JWKS, oldest first (tests and logs).
    package var publishedKids: [String] { snapshot.withLock { $0.records.map(\.kid) } }

    /// Every `refreshInterval`: rotate when due, then read the keys again.
    package func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(Self.refreshInterval))
            guard !Task.isCancelled else { return }
            await maintain()
        }
    }

    /// One check: when the newest key is `signing_key_rotation` old, a new one is made (once,
    /// whichever instances check together); then the keys are read again.
    package func maintain() async {
        let now = clock()
        let newest = snapshot.withLock { $0.records.filter { $0.retiredAt == nil }.map(\.createdAt).max() }
        if newest.map({ $0 + rotation <= now }) ?? true {
            do {
                if let kid = try await store.rotate(
                    now: now, activatesAt: now + Self.publicationLead, ifNewestCreatedAtOrBefore: now - rotation, make: Self.makeKey)
                {
                    logger.info("rotated the access-token signing key", metadata: [
                        "kid": .string(kid), "signs_from": .string(RFC3339.format(now + Self.publicationLead)),
                    ])
                }
            } catch {
                logger.warning("could not rotate the access-token signing key", metadata: ["error": "\(error)"])
            }
        }
        do {
            try await refresh()
        } catch {
            logger.warning("could not read the access-token signing keys", metadata: ["error": "\(error)"])
        }
    }

    /// Reads the keys again; the JWKS is rendered anew only when they changed.
    package func refresh() async throws {
        let records = try await store.published(now: clock())
        let known = snapshot.withLock { $0 }
        guard records != known.records else { return }
        let fresh = Self.snapshot(of: records, reusing: known.minters, logger: logger)
        snapshot.withLock { $0 = fresh }
    }

    private static func snapshot(of records: [SigningKeyRecord], reusing minters: [String: AccessTokenMinter], logger: Logger) -> Snapshot {
        var opened: [String: AccessTokenMinter] = [:]
        var published: [JSONValue] = []
        for record in records {
            // A row altered by hand must not break the set: an unreadable JWK is left out.
            guard let jwk = try? JSONParser.parse(Array(record.publicJWK.utf8)).object, jwk["kid"]?.string == record.kid else {
                logger.warning("an access-token signing key has an unusable public JWK; not published", metadata: ["kid": .string(record.kid)])
                continue
            }
            published.append(.object(jwk))
            if let known = minters[record.kid] {
                opened[record.kid] = known
            } else if let bytes = record.privateKey, let key = try? P256PrivateKey(pem: String(decoding: bytes, as: UTF8.self)) {
                // A key signs only if what is published is its own public half.
                if let own = try? P256JSONWebKey(key.publicKey), jwk["x"]?.string == own.x, jwk["y"]?.string == own.y {
                    opened[record.kid] = AccessTokenMinter(kid: record.kid, key: key)
                } else {
                    logger.warning("an access-token signing key's published JWK is not its own; it does not sign", metadata: [
                        "kid": .string(record.kid),
                    ])
                }
            }
        }
        let jwks = JSONWriter.bytes(.object(JSONObject([("keys", .array(published))])))
        return Snapshot(records: records, minters: opened, jwks: jwks)
    }
}
