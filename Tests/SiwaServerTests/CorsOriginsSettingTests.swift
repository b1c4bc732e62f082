import Foundation
import Testing

/// `cors_origins` as an operator sets it (docs/guides/connecting-your-app.md, docs/reference/command-line.md): a wildcard or plain http off loopback
/// stops the binary with exit code 2 and one line naming the key.
@Suite struct CorsOriginsSettingTests {
    @Test(arguments: ["*", "http://app.example.com", "https://app.example.com,*", "https://app.example.com/spa"])
    func serveRefusesItWithExitCode2NamingTheKey(_ value: String) async throws {
        let environment = try CommandLineTests.servable().merging(["SIWA_CORS_ORIGINS": value]) { $1 }
        let result = try await ServerProcess.run(["serve"], environment: environment)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains("cors_origins:") == true)
    }

    /// The configuration is refused before anything listens, so the port is never bound.
    @Test func demoRefusesItTheSameWay() async throws {
        let result = try await ServerProcess.run(["demo", "--port", "1", "--cors-origins", "*"], environment: ["SIWA_LOG_FORMAT": "json"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("cors_origins:"))
    }

    @Test func checkConfigShowsTheOrigins() async throws {
        let result = try await ServerProcess.run(
            ["check-config"], environment: ["SIWA_CORS_ORIGINS": "https://App.example.com/, http://localhost:3000"])
        #expect(result.stdout.contains("cors_origins = https://app.example.com,http://localhost:3000"))
    }
}
