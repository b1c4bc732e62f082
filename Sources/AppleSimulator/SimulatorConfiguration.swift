import Glibc
import OpenSSLCrypto

/// How an `AppleIDSimulator` runs. Every field has a default that works on a developer's
/// machine with no setup: loopback, a free port, in-memory state and generated keys.
public struct SimulatorConfiguration: Sendable {
    public var host: String
    /// 0 asks the system for a free port.
    public var port: UInt16
    /// When set, state is loaded from here at start and saved on every change; the developer
    /// key is written here as `AuthKey_<keyID>.p8` (and `ca.pem` in TLS mode).
    public var stateDirectory: String?
    public var teamID: String
    public var keyID: String
    /// The developer's `.p8` (PKCS#8 P-256) whose public half checks client secrets, as
    /// Apple's portal holds it. Generated when nil.
    public var developerKeyPEM: String?
    /// Serve HTTPS through a throwaway CA, for clients that refuse plain HTTP.
    public var tls: Bool
    /// Seconds since 1970; tests hold it to expire codes and client secrets.
    public var clock: @Sendable () -> Int64
    /// Where new RS256 signing keys come from (at start and on every rotation). An RSA-2048
    /// key costs about a tenth of a second of CPU, so a test suite that starts hundreds of
    /// simulators hands them out from a small pool instead.
    public var makeSigningKey: @Sendable () throws -> RSAPrivateKey
    /// Also listen for SMTP on loopback: Private Email Relay and a mailbox. nil: no mail.
    public var mail: SimulatorMailSettings?
    /// Sending domains the configured team registers for Private Email Relay at start.
    public var relayDomains: [String]

    public init(
        host: String = "127.0.0.1", port: UInt16 = 0, stateDirectory: String? = nil, teamID: String = "SIMTEAM001",
        keyID: String = "SIMKEY0001", developerKeyPEM: String? = nil, tls: Bool = false,
        clock: @escaping @Sendable () -> Int64 = SimulatorConfiguration.wallClock,
        makeSigningKey: @escaping @Sendable () throws -> RSAPrivateKey = SimulatorConfiguration.generateSigningKey,
        mail: SimulatorMailSettings? = nil, relayDomains: [String] = []
    ) {
        self.host = host
        self.port = port
        self.stateDirectory = stateDirectory
        self.teamID = teamID
        self.keyID = keyID
        self.developerKeyPEM = developerKeyPEM
        self.tls = tls
        self.clock = clock
        self.makeSigningKey = makeSigningKey
        self.mail = mail
        self.relayDomains = relayDomains
    }

    @Sendable public static func generateSigningKey() throws -> RSAPrivateKey {
        try RSAPrivateKey.generate(bits: 2048)
    }

    @Sendable public static func wallClock() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }
}
