import AppleSimulator
import Foundation
import Synchronization
import Testing
import TestSupport

/// Two real `siwa-server serve` processes on one PostgreSQL (docs/guides/postgresql.md): instance A is killed
/// with SIGKILL while four clients sign in through it, and every sign-in it answered 200 has a
/// session that instance B accepts: nothing acknowledged is lost.
@Suite(
    .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"),
    .timeLimit(.minutes(2)))
struct PostgresKillTests {
    final class Acknowledged: Sendable {
        let sessions = Mutex<[String]>([])
    }

    @Test func everySignInAnInstanceAcknowledgedBeforeKillNineWorksOnTheOther() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let url = try await PostgresCluster.shared().makeDatabase()
        let extra = ["SIWA_DATA_KEY": Data(repeating: 5, count: 32).base64EncodedString(), "SIWA_RATE_LIMIT": "0"]
        let folderA = ServerProcess.makeFolder()
        let folderB = ServerProcess.makeFolder()
        defer {
            try? FileManager.default.removeItem(atPath: folderA)
            try? FileManager.default.removeItem(atPath: folderB)
        }
        let a = try ServerProcess(["serve"], environment: ServerProcess.environment(simulator: simulator, database: url, extra), folder: folderA)
        let b = try ServerProcess(["serve"], environment: ServerProcess.environment(simulator: simulator, database: url, extra), folder: folderB)
        let portA = try #require(await a.waitForPort())
        let portB = try #require(await b.waitForPort())
        try await ServerProcess.waitUntilReady(port: portA)
        try await ServerProcess.waitUntilReady(port: portB)

        let acknowledged = Acknowledged()
        await withTaskGroup(of: Void.self) { group in
            for client in 0..<4 {
                group.addTask {
                    for index in 0..<10_000 {
                        let sub = "000804.\(client).\(index).0804"
                        guard let reply = try? await ServerProcess.signIn(port: portA, simulator: simulator, sub: sub, nonce: "n-\(client)-\(index)"),
                              reply.status == 200
                        else { return }  // A is gone
                        if let token = reply.json?["session"]?.object?["token"]?.string {
                            let count = acknowledged.sessions.withLock { sessions in
                                sessions.append(token)
                                return sessions.count
                            }
                            // Mid-stream: the client with the 40th answer kills A while the
                            // others' sign-ins are in flight.
                            if count == 40 { a.signal(SIGKILL) }
                        }
                    }
                }
            }
        }
        _ = await a.wait(seconds: 10)

        let sessions = acknowledged.sessions.withLock { $0 }
        #expect(sessions.count >= 40)
        var refused = 0
        for session in sessions {
            let me = try await HTTPRequest.send(
                port: portB, "GET /api/me HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(session)\r\n\r\n")
            if !me.hasPrefix("HTTP/1.1 200") { refused += 1 }
        }
        #expect(refused == 0, "\(refused) of \(sessions.count) acknowledged sessions were lost")
        b.signal(SIGTERM)
        #expect(await b.wait(seconds: 30) == 0)
        await simulator.stop()
    }
}
