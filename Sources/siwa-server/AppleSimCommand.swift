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
            /sim/log.
            """
    )

    @Option(help: "Port to listen on (127.0.0.1).")
    var port: UInt16 = 8090

    @Option(name: .customLong("state-dir"), help: "Keep keys, people and tokens here across restarts (default: a new temporary folder).")
    var stateDirectory: String?

    @Flag(help: "Serve HTTPS with a throwaway CA (written to the state folder as ca.pem).")
    var tls = false

    func run() async throws {
        LoggingSetup.bootstrap(format: isatty(1) != 0 ? .text : .json, level: .info)
        let folder = stateDirectory ?? Self.temporaryFolder()
        let simulator: AppleIDSimulator
        do {
            simulator = try AppleIDSimulator(
                configuration: SimulatorConfiguration(port: port, stateDirectory: folder, tls: tls),
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
            """ + (tls ? "\n  SIWA_APPLE_CA_FILE=\(folder)/ca.pem" : "") + "\n"
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
