import JSON
import OpenSSLCrypto

/// A developer team as Apple's portal knows it: its ID and the Sign in with Apple key whose
/// public half checks the team's client secrets. The simulator starts with one team (its
/// configuration's); `POST /sim/teams` and `POST /sim/transfer` make others, each with a key of
/// its own, so one simulator can play both sides of an app transfer (APPLE.md §8).
public struct SimulatorTeam: Sendable {
    public let teamID: String
    public let keyID: String
    /// The team's `.p8` (PKCS#8 P-256), as downloaded from the portal.
    public let developerKeyPEM: String
    let secrets: ClientSecretCheck

    init(teamID: String, keyID: String, developerKeyPEM: String) throws {
        self.teamID = teamID
        self.keyID = keyID
        self.developerKeyPEM = developerKeyPEM
        secrets = ClientSecretCheck(teamID: teamID, keyID: keyID, publicKey: try P256PrivateKey(pem: developerKeyPEM).publicKey)
    }

    /// A new team with a fresh key and a key ID of Apple's shape.
    static func make(teamID: String, avoidingKeyIDs used: Set<String>) throws -> SimulatorTeam {
        var keyID: String
        repeat {
            keyID = String(SecureRandom.bytes(10).map { identifierAlphabet[Int($0) % identifierAlphabet.count] })
        } while used.contains(keyID)
        return try SimulatorTeam(teamID: teamID, keyID: keyID, developerKeyPEM: try P256PrivateKey.generate().pem())
    }

    private static let identifierAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    /// Team IDs and key IDs are ten upper-case letters and digits (APPLE.md §0).
    static func isIdentifier(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
    }

    /// What the control API hands a test: everything needed to configure the team's server.
    var json: JSONValue {
        .object(JSONObject([("team_id", .string(teamID)), ("key_id", .string(keyID)), ("private_key", .string(developerKeyPEM))]))
    }

    init?(json: JSONObject) {
        guard let teamID = json.text("team_id"), let keyID = json.text("key_id"), let pem = json.text("private_key") else { return nil }
        do {
            try self.init(teamID: teamID, keyID: keyID, developerKeyPEM: pem)
        } catch {
            return nil
        }
    }
}
