import Foundation
import Testing

/// `siwa-server apple-sim` as a developer runs it, and siwa-server configured from its banner.
@Suite struct AppleSimCommandTests {
    @Test func printsItsSettingsServesAppleKeysAndStopsOnSIGTERM() async throws {
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let simulator = try ServerProcess([
            "apple-sim", "--port", "0", "--state-dir", folder + "/sim", "--smtp-port", "0", "--relay-domain", "Example.com",
            "--relay-domain", "mail.example.com",
        ])
        var banner = ""
        for _ in 0..<2400 where !banner.contains("Relay domains") {
            try await Task.sleep(for: .milliseconds(25))
            banner = simulator.stdoutText
        }
        let settings = Dictionary(uniqueKeysWithValues: banner.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            return parts.count == 2 && parts[0].hasPrefix("SIWA_") ? (parts[0], parts[1]) : nil
        })
        let baseURL = try #require(settings["SIWA_APPLE_BASE_URL"])
        #expect(settings["SIWA_TEAM_ID"] == "SIMTEAM001")
        #expect(FileManager.default.fileExists(atPath: try #require(settings["SIWA_PRIVATE_KEY_FILE"])))
        let port = try #require(UInt16(baseURL.split(separator: ":").last ?? ""))
        await #expect(try HTTPRequest.get(port: port, path: "/auth/keys").contains(#""kty":"RSA""#))
        // The SMTP listener's port, which was asked as any, is printed; the domains are registered.
        let smtpLine = try #require(banner.split(separator: "\n").first { $0.contains("smtp_url: smtp://127.0.0.1:") })
        #expect((UInt16(smtpLine.split(separator: ":").last ?? "") ?? 0) > 0)
        #expect(banner.contains("Relay domains of SIMTEAM001: Example.com, mail.example.com"))
        await #expect(try HTTPRequest.get(port: port, path: "/sim/relay/domains").contains(#""domains":["example.com","mail.example.com"]"#))

        // siwa-server accepts the simulator's developer key as its Sign in with Apple key.
        var environment = settings
        environment["SIWA_CLIENT_IDS"] = "com.example.app"
        let check = try await ServerProcess.run(["check-config"], environment: environment)
        #expect(check.status == 0, "\(check.stdout)")

        simulator.signal(SIGTERM)
        #expect(await simulator.wait(seconds: 15) == 0)
    }

    @Test func aRelayDomainThatIsNotADomainNameStopsItAtOnce() async throws {
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try await ServerProcess.run(["apple-sim", "--port", "0", "--state-dir", folder + "/sim", "--relay-domain", "not a domain"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("relay domain") && run.stderr.contains("is not a domain name"), "\(run.stderr)")
    }
}
