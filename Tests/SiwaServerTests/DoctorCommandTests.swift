import AppleSimulator
import Foundation
import OpenSSLCrypto
import TestSupport
import Testing

/// `siwa-server doctor` against the simulator, which answers like Apple (issue 9, finding 10):
/// each way a client secret goes wrong is named by the setting to look at.
@Suite struct DoctorCommandTests {
    static func run(_ simulator: AppleIDSimulator, _ extra: [String: String] = [:], arguments: [String] = []) async throws
        -> (status: Int32, stdout: String, stderr: String)
    {
        let environment = ServerProcess.environment(simulator: simulator, ["SIWA_CLIENT_IDS": "com.example.app,com.example.web"].merging(extra) { $1 })
        return try await ServerProcess.run(["doctor"] + arguments, environment: environment)
    }

    static func expectNoSecret(_ output: String, simulator: AppleIDSimulator) {
        #expect(!output.contains("eyJ"), "no JWT (client secret) is printed")
        let keyBody = simulator.developerKeyPEM.split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
        #expect(!output.contains(keyBody))
        #expect(!output.contains("siwa-doctor."), "the made-up code is not printed either")
    }

    @Test func aGoodConfigurationPassesEveryCheck() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let result = try await Self.run(simulator)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        for line in [
            "ok   client secret (com.example.app): ES256, kid \(simulator.keyID), iss \(simulator.teamID), lifetime 1d",
            "ok   apple token endpoint (com.example.app): Apple accepts the client secret",
            "ok   apple token endpoint (com.example.web): Apple accepts the client secret",
            "ok   apple keys: ", "ok   database: ", "all checks passed",
        ] {
            #expect(result.stdout.contains(line), "\(line) in \(result.stdout)")
        }
        Self.expectNoSecret(result.stdout + result.stderr, simulator: simulator)
        await simulator.stop()
    }

    @Test(arguments: [
        ("SIWA_KEY_ID", "WRONGKEY01", "check key_id"),
        ("SIWA_TEAM_ID", "WRONGTEAM1", "check team_id"),
        ("SIWA_PRIVATE_KEY", "another", "check private_key"),
    ])
    func aSecretAppleRefusesNamesTheSettingToLookAt(_ variable: String, _ value: String, _ hint: String) async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let setting = value == "another" ? try P256PrivateKey.generate().pem() : value
        let result = try await Self.run(simulator, [variable: setting])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("FAIL apple token endpoint (com.example.app): Apple refuses the client secret (invalid_client"))
        #expect(result.stdout.contains(hint), "\(result.stdout)")
        #expect(result.stdout.contains("ok   apple keys: "), "the other checks still run")
        #expect(result.stdout.contains("check(s) failed"))
        Self.expectNoSecret(result.stdout + result.stderr, simulator: simulator)
        await simulator.stop()
    }

    /// docs/reference/command-line.md: doctor checks the webhook receiver, with a request no receiver takes for an
    /// event (a HEAD: unsigned, no body), and names its origin only, never a path or query.
    @Test func theWebhookReceiverIsReportedReachableOrNot() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let receiver = try WebhookReceiver { _, _ in .status(405) }
        let up = try await Self.run(simulator, ["SIWA_WEBHOOK_URL": receiver.url + "?token=hush-hush-123", "SIWA_WEBHOOK_SECRET": receiver.secret])
        #expect(up.status == 0, "\(up.stdout)\(up.stderr)")
        #expect(up.stdout.contains("ok   webhook receiver: http://127.0.0.1:\(receiver.port) is reachable (HTTP 405 to a HEAD request"))
        let request = try #require(receiver.deliveries.first)
        #expect(receiver.deliveries.count == 1)
        #expect(request.method == "HEAD" && request.body.isEmpty)
        #expect(request.header("webhook-signature") == nil && request.header("webhook-id") == nil)
        receiver.stop()

        // Nothing listens on port 1 of loopback.
        let down = try await Self.run(simulator, ["SIWA_WEBHOOK_URL": "http://127.0.0.1:1/hooks?token=hush-hush-123", "SIWA_WEBHOOK_SECRET": receiver.secret])
        #expect(down.status == 1)
        #expect(down.stdout.contains("FAIL webhook receiver: cannot reach http://127.0.0.1:1: "))
        for output in [up.stdout + up.stderr, down.stdout + down.stderr] {
            #expect(!output.contains("hush-hush") && !output.contains(receiver.secret.dropFirst(6)))
        }
        await simulator.stop()
    }

    /// A secret minted by a clock a year behind has expired when Apple reads it.
    @Test func anExpiredSecretPointsAtTheClock() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let yearAgo = Int64(Date().timeIntervalSince1970) - 365 * 86_400
        let result = try await Self.run(simulator, arguments: ["--now", "\(yearAgo)"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("invalid_client"))
        #expect(result.stdout.contains("expired"))
        #expect(result.stdout.contains("check this machine's clock"))
        await simulator.stop()
    }

    /// Like `check-config`, it reports (exit 1), even for settings `serve` would end on.
    @Test func missingSettingsAreReportedNotFatal() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let result = try await Self.run(simulator, ["SIWA_TEAM_ID": "", "SIWA_CLIENT_IDS": "", "SIWA_PUBLIC_URL": "localhost:8080"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("FAIL team_id: "))
        #expect(result.stdout.contains("FAIL client_ids: "))
        #expect(result.stdout.contains("FAIL public_url: "))
        #expect(result.stdout.contains("ok   apple keys: "))
        await simulator.stop()
    }

    @Test func anAbsurdNowIsRefused() async throws {
        let result = try await ServerProcess.run(["doctor", "--now", "\(Int64.max)"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--now"))
    }
}
