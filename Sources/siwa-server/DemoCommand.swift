import Accounts
import AppleSimulator
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import JOSE
import Logging
import OpenSSLCrypto
import SiwaApp
import WireFormat

/// `siwa-server demo` (docs/reference/command-line.md): the server and an Apple ID simulator together, on a throwaway
/// database and keys in a temporary folder (removed at exit), so a person can sign in in a
/// browser with no Apple account and no network.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the server with an embedded Apple ID simulator and a throwaway database: sign in in a browser, no Apple account needed.",
        discussion: "Open the printed http://localhost:PORT/ URL. Everything is deleted when the demo stops (Ctrl-C)."
    )

    @Option(help: "Port of the web server on localhost.")
    var port: UInt16 = 8080

    @Option(help: "Web apps on other origins that may call /api/* from a browser (cors_origins, comma-separated).")
    var corsOrigins: String?

    func run() async throws {
        let isTerminal = isatty(1) != 0
        let format: LogFormat = isTerminal ? .text : .json
        LoggingSetup.bootstrap(format: format, level: .info)
        let logger = Logger(label: "siwa")
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }

        let simulator: AppleIDSimulator
        let application: Application
        let adminToken: String
        do {
            simulator = try AppleIDSimulator(
                configuration: SimulatorConfiguration(
                    port: 0, stateDirectory: folder + "/apple-sim", mail: SimulatorMailSettings(),
                    relayDomains: [Self.mailDomain]),
                logger: Logger(label: "siwa.apple-sim"))
            try simulator.start()
            let publicURL = "http://localhost:\(port)"
            // The console is on, with a token made for this run and printed below: the demo is
            // one person's, on loopback, and gone at Ctrl-C.
            adminToken = Base64.url.encode(SecureRandom.bytes(32))
            // Validated exactly as a configuration file would be.
            var settings = [
                "listen": "127.0.0.1:\(port)", "public_url": publicURL, "database": folder + "/siwa.sqlite3",
                "apple_base_url": simulator.baseURL, "team_id": simulator.teamID, "key_id": simulator.keyID,
                "private_key": simulator.developerKeyPEM, "client_ids": "com.example.app,com.example.web",
                "web_client_id": "com.example.web", "data_key": Base64.url.encode(SecureRandom.bytes(32)),
                "log_format": format.rawValue,
                // Webhook events go to the demo's own receiver, which shows them in the browser.
                "webhook_url": "http://127.0.0.1:\(port)\(DemoWebhookReceiver.path)",
                "webhook_secret": "whsec_" + Base64.standard.encode(SecureRandom.bytes(32)),
                // Mail goes to the simulator, which plays Apple's relay (the demo's domain is
                // registered for its team) and keeps every message in its mailbox.
                "smtp_url": "smtp://127.0.0.1:\(simulator.smtpPort)",
                "email_from": "siwa-server demo <noreply@\(Self.mailDomain)>",
                "admin_token": adminToken,
            ]
            settings["cors_origins"] = corsOrigins
            let configuration = try Configuration(settings: settings, isTerminal: isTerminal)
            application = try Application(configuration: configuration, logger: logger, demo: true)
            try application.start()
        } catch let error as ConfigurationError {
            // Only --cors-origins comes from the person running the demo; docs/reference/command-line.md's exit code.
            LoggingSetup.reportFatal("configuration error: \(error)", format: format)
            throw ExitCode(2)
        } catch {
            LoggingSetup.reportFatal("demo cannot start: \(error)", format: format)
            throw ExitCode(1)
        }
        let banner = """

            siwa-server demo — open http://localhost:\(port)/

              Press "Sign in with Apple": the Apple ID simulator's consent page opens (no Apple
              Account, no network). Share or hide your email, continue, and you land on your
              account page. Then sign out and in again (your name stays), end a session, or
              delete the account. Or sign up with a password: the verification mail is in the
              mailbox below; its link proves the address.

              Webhooks:  http://localhost:\(port)\(DemoWebhookReceiver.path)  (the events your backend would receive)
              Console:   http://localhost:\(port)/console  (sign in with the admin token \(adminToken))
              API:       curl http://localhost:\(port)/openapi.json
              Simulator: \(simulator.baseURL)/sim/log  (what "Apple" received)
              Mailbox:   \(simulator.baseURL)/mailbox  (mail the simulator received on SMTP 127.0.0.1:\(simulator.smtpPort))
              Ctrl-C stops the demo and deletes its database and keys.

            """
        LogSink.standardOutput.flush()
        let bytes = Array(banner.utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        let signal = await StopSignal.next()
        logger.info("stopping", metadata: ["signal": .string(signal)])
        await application.stop()
        await simulator.stop()
        LogSink.standardOutput.flush()
    }

    /// The demo's sending domain, registered with the simulator's relay as a team registers its
    /// own with Apple.
    static let mailDomain = "demo.siwa.test"

    private static func temporaryFolder() -> String {
        var template = Array("/tmp/siwa-demo-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { return "/tmp/siwa-demo-\(getpid())" }
        return String(cString: made)
    }
}
