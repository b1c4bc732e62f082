import JOSE
import JSON
import OpenSSLCrypto

/// Client authentication as Apple does it on `/auth/token` and `/auth/revoke` (APPLE.md §5):
/// an ES256 JWT signed with the developer's `.p8`. Every failure is `invalid_client`; the
/// description says which rule failed so a developer can fix the secret.
struct ClientSecretCheck: Sendable {
    static let audience = "https://appleid.apple.com"

    let teamID: String
    let keyID: String
    let publicKey: P256PublicKey

    /// nil when the secret authenticates `clientID`, else why not.
    func failure(secret: String?, clientID: String?, now: Int64) -> String? {
        guard let clientID, !clientID.isEmpty else { return "client_id is missing." }
        guard let secret, !secret.isEmpty else { return "client_secret is missing." }
        guard let jws = try? CompactJWS(secret) else { return "client_secret is not a compact JWS." }
        guard jws.algorithm == "ES256" else { return "client_secret alg must be ES256." }
        guard let kid = jws.keyID else { return "client_secret header has no kid." }
        guard kid == keyID else { return "client_secret kid \(kid) is not a key of this team." }
        // Apple wants JWS's raw 64-byte R||S; the DER that OpenSSL, Java and SecKey emit is
        // refused (TN3107), which `verifyES256` does by accepting only 64 bytes.
        guard jws.signature.count == 64 else {
            return "client_secret signature is \(jws.signature.count) bytes; ES256 needs raw R||S (64 bytes), not DER."
        }
        guard publicKey.verifyES256(signature: jws.signature, message: jws.signingInput) else {
            return "client_secret signature does not verify with key \(keyID)."
        }
        let claims = jws.payload
        guard claims.text("iss") == teamID else { return "client_secret iss must be the team id." }
        guard claims.text("sub") == clientID else { return "client_secret sub must equal client_id." }
        guard claims.text("aud") == Self.audience else { return "client_secret aud must be \(Self.audience)." }
        guard let issuedAt = claims.number("iat") else { return "client_secret has no integer iat." }
        guard let expiresAt = claims.number("exp") else { return "client_secret has no integer exp." }
        guard expiresAt > now else { return "client_secret has expired." }
        // Apple refuses secrets meant to live longer than 15,777,000 s (about six months). The
        // times are the caller's: subtract with overflow checked (iat = -2^63 must not crash).
        let (lifetime, overflow) = expiresAt.subtractingReportingOverflow(issuedAt)
        guard !overflow, lifetime <= ClientSecretMinter.appleMaximumLifetime,
              expiresAt - now <= ClientSecretMinter.appleMaximumLifetime
        else { return "client_secret lifetime exceeds 15777000 seconds." }
        return nil
    }
}
