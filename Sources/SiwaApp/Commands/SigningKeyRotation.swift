import Accounts
import Logging
import Store

/// `siwa-server rotate-signing-key`: a new access-token signing key in the configured database
/// (either engine), while the servers run or not. A rotation by hand usually has a reason (a
/// key that leaked), so unlike a rotation that falls due (which publishes the new key
/// `AccessTokenKeys.publicationLead` before it signs) the new key signs at once: a server
/// started afterwards signs with it from its first token, a running one from its next re-read
/// of the keys (`AccessTokenKeys.refreshInterval`). The keys it replaces stay in the JWKS for a
/// day, so tokens they signed still verify; `retireOld` removes them from it at once.
public enum SigningKeyRotation {
    public struct Rotated: Sendable {
        public let kid: String
        /// When the new key starts signing: the rotation's own time.
        public let signsFrom: Int64
        /// The kids that were in the JWKS before.
        public let replaced: [String]
        /// When the replaced keys leave the JWKS; nil when they left it at once (`retireOld`),
        /// or there were none.
        public let replacedUnpublishedAt: Int64?

        /// What the command prints: the kid and the times, never key material.
        public var summary: String {
            var text = "new access-token signing key \(kid): published and signing from now (\(RFC3339.format(signsFrom)))"
            if let replacedUnpublishedAt {
                let keys = replaced.count == 1 ? "the key it replaces stops signing now and stays" : "the \(replaced.count) keys it replaces stop signing now and stay"
                text += "; \(keys) in the JWKS until \(RFC3339.format(replacedUnpublishedAt))"
            } else if !replaced.isEmpty {
                text += "; removed from the JWKS now (--retire-old): " + replaced.joined(separator: ", ")
            }
            return text
        }
    }

    public static func rotate(configuration: Configuration, logger: Logger, now: Int64, retireOld: Bool = false) throws -> Rotated {
        let store = try Store.open(configuration.database, connections: 1) { try DataKeyFile.key(for: configuration, logger: logger) }
        defer { store.close() }
        let (kid, replaced) = try store.signingKeys.replaceNowBlocking(now: now, removingOlder: retireOld, make: AccessTokenKeys.makeKey)
        return Rotated(
            kid: kid, signsFrom: now, replaced: replaced,
            replacedUnpublishedAt: retireOld || replaced.isEmpty ? nil : now + SigningKeyStore.retiredKeyLifetime)
    }
}
