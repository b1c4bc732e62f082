import Logging
import Store

/// `siwa-server rotate-signing-key`: a new access-token signing key in the configured database
/// (either engine), while the servers run or not. Like a rotation that falls due, the new key is
/// published at once and signs once every instance and verifier cache has had time to see it
/// (`AccessTokenKeys.publicationLead`); the key it replaces stays in the JWKS for a day after.
public enum SigningKeyRotation {
    public struct Rotated: Sendable {
        public let kid: String
        /// When the new key starts signing.
        public let signsFrom: Int64
        /// When the key it replaces leaves the JWKS (nil when there was none).
        public let replacedUnpublishedAt: Int64?

        /// What the command prints: the kid and the times, never key material.
        public var summary: String {
            var text = "new access-token signing key \(kid): published now, signs from \(RFC3339.format(signsFrom))"
            if let replacedUnpublishedAt {
                text += "; the key it replaces signs until then and stays in the JWKS until \(RFC3339.format(replacedUnpublishedAt))"
            }
            return text
        }
    }

    public static func rotate(configuration: Configuration, logger: Logger, now: Int64) throws -> Rotated {
        let store = try Store.open(configuration.database, connections: 1) { try DataKeyFile.key(for: configuration, logger: logger) }
        defer { store.close() }
        let activatesAt = now + AccessTokenKeys.publicationLead
        let before = try store.signingKeys.publishedBlocking(now: now)
        let replacing = before.contains { $0.retiredAt == nil }
        guard let kid = try store.signingKeys.rotateBlocking(now: now, activatesAt: activatesAt, make: AccessTokenKeys.makeKey) else {
            throw AccessTokenKeys.Failure(description: "no key was made")
        }
        let after = try store.signingKeys.publishedBlocking(now: now)
        // The new key signs once every other key still signing has retired (the store may have
        // set a later retirement than asked).
        let retires = after.filter { $0.kid != kid }.compactMap(\.retiredAt).filter { $0 > now }.max() ?? activatesAt
        let signsFrom = SigningKeyRecord.signing(among: after, at: now)?.kid == kid ? now : retires
        return Rotated(
            kid: kid, signsFrom: signsFrom, replacedUnpublishedAt: replacing ? retires + SigningKeyStore.retiredKeyLifetime : nil)
    }
}
