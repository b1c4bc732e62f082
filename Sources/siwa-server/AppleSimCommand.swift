import AppleSimulator
import ArgumentParser
import Glibc
import Logging
import SiwaApp

struct AppleSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-sim",
        abstract: "Run only the Apple ID simulator: Apple's keys, authorize, token, revoke and usermigrationinfo endpoints, offline.",
        discussion: """
            Point siwa-server (or any Sign in with Apple backend) at the printed base URL, team id,
            key id and key file. Control API: /sim/codes, /sim/notify, /sim/revoke-consent,
            /sim/delete-account, /sim/rotate-keys, /sim/teams, /sim/transfer, /sim/clock, /sim/faults,
            /sim/log, /sim/relay/domains, /sim/relay/forwarding, /sim/mailbox.
            It also listens for SMTP on 127.0.0.1 (--smtp-port): mail to a relay address it issued is
            forwarded to the person's own address when the sender's domain is registered for the team
            (--relay-domain, POST /sim/relay/domains) and forwarding is on, else refused at RCPT TO;
            every message it accepts is kept in a mailbox (GET /sim/mailbox, and the page /mailbox).
            """
    )

    @Option(help: "Port to listen on (127.0.0.1).")
    var port: UInt16 = 8090

    @Option(name: .customLong("state-dir"), help: "Keep keys, people and tokens here across restarts (default: a new temporary folder).")
    var stateDirectory: String?

    @Flag(help: "Serve HTTPS with a throwaway CA (written to the state folder as ca.pem).")
    var tls = false

    @Option(name: .customLong("smtp-port"), help: "Port of the SMTP listener on 127.0.0.1 (0: any free port, printed).")
    var smtpPort: UInt16 = 0

    @Option(name: .customLong("relay-domain"), help: "A sending domain the team registers for Private Email Relay (repeatable).")
    var relayDomains: [String] = []

    func run() async throws {
        LoggingSetup.bootstrap(format: isatty(1) != 0 ? .text : .json, level: .info)
        let folder = stateDirectory ?? Self.temporaryFolder()
        let simulator: AppleIDSimulator
        do {
            simulator = try AppleIDSimulator(
                configuration: SimulatorConfiguration(
                    port: port, stateDirectory: folder, tls: tls, mail: SimulatorMailSettings(port: smtpPort), relayDomains: relayDomains),
                logger: Logger(label: "siwa.apple-sim"))
            try simulator.start()
        } catch {
            LoggingSetup.reportFatal("apple-sim cannot start: \(error)", format: isatty(1) != 0 ? .text : .json)
            throw ExitCode(1)
        }
        // Written straight to the descriptor: a pipe would hold print()'s buffer until exit.
        let banner = """
            Apple ID simulator at \(simulator.baseURL)
            Configure siwa-server with:
              SIWA_APPLE_BASE_URL=\(simulator.baseURL)
              SIWA_TEAM_ID=\(simulator.teamID)
              SIWA_KEY_ID=\(simulator.keyID)
              SIWA_PRIVATE_KEY_FILE=\(folder)/AuthKey_\(simulator.keyID).p8
            """ + (tls ? "\n  SIWA_APPLE_CA_FILE=\(folder)/ca.pem" : "") + """

            SMTP (Private Email Relay and mailbox) at 127.0.0.1:\(simulator.smtpPort)
              smtp_url: smtp://127.0.0.1:\(simulator.smtpPort)
              Mailbox: \(simulator.baseURL)/mailbox
              Relay domains of \(simulator.teamID): \(relayDomains.isEmpty ? "none (POST /sim/relay/domains)" : relayDomains.joined(separator: ", "))

            """
        LogSink.standardOutput.flush()
        let bytes = Array(banner.utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        _ = await StopSignal.next()
        await simulator.stop()
        LogSink.standardOutput.flush()
    }

    private static func temporaryFolder() -> String {
        var template = Array("/tmp/siwa-apple-sim-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { return "/tmp" }
        return String(cString: made)
    }
}
