import Accounts
import JOSE
import OpenSSLCrypto

/// The team's Sign in with Apple credentials from the configuration, checked and turned into
/// a client-secret minter.
public enum AppleCredentials {
    /// Fails with the configuration key that is missing or wrong, as configuration errors do.
    public static func minter(_ configuration: Configuration) throws(ConfigurationError) -> ClientSecretMinter {
        guard let teamID = configuration.teamID else { throw ConfigurationError(key: "team_id", problem: "required to talk to Apple") }
        guard let keyID = configuration.keyID else { throw ConfigurationError(key: "key_id", problem: "required to talk to Apple") }
        guard let pem = configuration.privateKeyPEM else {
            throw ConfigurationError(key: "private_key", problem: "required to talk to Apple (or set private_key_file)")
        }
        let key: P256PrivateKey
        do {
            key = try P256PrivateKey(pem: pem)
        } catch {
            throw ConfigurationError(key: configuration.privateKeyFile == nil ? "private_key" : "private_key_file", problem: (error as? CryptoError)?.reason ?? "cannot be read")
        }
        return ClientSecretMinter(teamID: teamID, keyID: keyID, key: key)
    }
}
