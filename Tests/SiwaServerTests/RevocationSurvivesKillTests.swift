import TestSupport
import AppleSimulator
import Foundation
import JSON
import Testing

/// docs/RELIABILITY.md: "a kill -9 at any moment leaves a database that opens and a queue that resumes".
/// The real binary, killed while a revocation is pending, finishes it after a restart.
@Suite struct RevocationSurvivesKillTests {
    @Test func aPendingRevocationIsDoneAfterKillNineAndRestart() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let environment = ServerProcess.environment(simulator: simulator, [
            "SIWA_CLIENT_IDS": "com.example.app,com.example.web", "SIWA_WEB_CLIENT_ID": "com.example.web",
            "SIWA_REVOCATION_BACKOFF": "1", "SIWA_REVOCATION_BACKOFF_MAX": "2",
        ])
        let first = try ServerProcess(["serve"], environment: environment, folder: folder)
        let port = try #require(await first.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)

        let issued = try simulator.issueCode(sub: "000400.00000000000000000000000000000400.0400", clientID: "com.example.app", nonce: "n")
        let body = JSONWriter.string(.object(JSONObject([
            ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string("n")),
        ])))
        let signIn = try await HTTPRequest.send(port: port, "POST /api/auth/apple HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let session = try #require(try JSONParser.parse(signIn.components(separatedBy: "\r\n\r\n").last ?? "").object?["session"]?.object?["token"]?.string, "\(signIn)")

        // Apple is down: the deletion leaves the revocation pending.
        simulator.injectFault(SimulatorFault(endpoint: .revoke, status: 503, count: 1000))
        let deletion = try await HTTPRequest.send(port: port, "DELETE /api/account HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(session)\r\nContent-Length: 0\r\n\r\n")
        #expect(deletion.hasSuffix(#"{"status":"deleted","apple_revocation":"pending"}"#))
        first.signal(SIGKILL)
        _ = await first.wait(seconds: 30)

        // Apple is back; a new process on the same database resumes the queue.
        simulator.clearFaults()
        simulator.clearCalls()
        let second = try ServerProcess(["serve"], environment: environment, folder: folder)
        let restartedPort = try #require(await second.waitForPort())
        #expect(try await eventually(within: .seconds(60)) {
            simulator.calls.contains { $0.endpoint == "revoke" && $0.parameters["token_type_hint"] == "refresh_token" }
        })
        #expect(try await eventually { try await HTTPRequest.get(port: restartedPort, path: "/metrics").contains("siwa_revocation_queue_depth 0") })
        second.signal(SIGTERM)
        #expect(await second.wait(seconds: 30) == 0)
        await simulator.stop()
    }
}
