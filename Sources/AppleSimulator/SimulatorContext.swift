import Logging
import OpenSSLCrypto

/// What every endpoint of the simulator shares: identity of the simulated team, the clock,
/// the state, and the test controls.
final class SimulatorContext: Sendable {
    let teamID: String
    let keyID: String
    let clock: @Sendable () -> Int64
    let makeSigningKey: @Sendable () throws -> RSAPrivateKey
    let store: SimulatorStore
    let clientSecrets: ClientSecretCheck
    let identityTokens = IdentityTokenMinter()
    let faults = FaultInjector()
    let calls = CallLog()
    let logger: Logger

    init(teamID: String, keyID: String, developerPublicKey: P256PublicKey, clock: @escaping @Sendable () -> Int64,
        makeSigningKey: @escaping @Sendable () throws -> RSAPrivateKey, store: SimulatorStore, logger: Logger
    ) {
        self.teamID = teamID
        self.keyID = keyID
        self.clock = clock
        self.makeSigningKey = makeSigningKey
        self.store = store
        self.clientSecrets = ClientSecretCheck(teamID: teamID, keyID: keyID, publicKey: developerPublicKey)
        self.logger = logger
    }

    var now: Int64 { clock() }
}
