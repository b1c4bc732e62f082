import AppleSimulator
import Foundation
import JSON
import Testing
import TestSupport

/// The database locked by another process (a backup tool, an operator's `sqlite3` shell holding
/// a write transaction): writes wait the busy timeout (5 s), then fail with a clear 503
/// `database_unavailable` that changes nothing, reads keep being answered, and once the lock
/// goes writes work again.
@Suite struct DatabaseLockedTests {
    @Test func aWriteLockHeldElsewhereFailsWritesCleanlyAndReadsGoOn() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/siwa.sqlite3"
        let server = try ServerProcess(["serve"], environment: ServerProcess.environment(simulator: simulator, database: database), folder: folder)
        let port = try #require(await server.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)
        func signIn(_ sub: String, _ nonce: String) async throws -> (status: Int, json: JSONObject?) {
            try await ServerProcess.signIn(port: port, simulator: simulator, sub: sub, nonce: nonce)
        }
        let before = try await signIn("000600.00000000000000000000000000000600.0600", "n-1")
        let token = try #require(before.json?["session"]?.object?["token"]?.string)

        // Another process takes the write lock and holds it until the test creates `release`
        // (at most 60 s): a fixed hold would race the server's 5 s busy wait on a loaded machine.
        let release = folder + "/release"
        let holder = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3", "-c", """
            import os, sqlite3, sys, time
            connection = sqlite3.connect(sys.argv[1], isolation_level=None)
            connection.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            deadline = time.time() + 60
            while not os.path.exists(sys.argv[2]) and time.time() < deadline:
                time.sleep(0.02)  # polls for the gate the test opens
            connection.execute("ROLLBACK")
            """, database, release], environment: ProcessInfo.processInfo.environment)
        #expect(try await eventually { holder.stdoutText.contains("locked") }, "\(holder.stderrText)")

        let newcomer = "000600.00000000000000000000000000000601.0600"
        let refused = try await signIn(newcomer, "n-2")
        #expect(refused.status == 503)
        #expect(refused.json?["error"]?.string == "database_unavailable")
        let me = try await HTTPRequest.send(port: port, "GET /api/me HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(token)\r\n\r\n")
        #expect(me.hasPrefix("HTTP/1.1 200"), "reads go on while another process holds the write lock")
        #expect(holder.isRunning, "the lock was still held while those were answered")
        _ = FileManager.default.createFile(atPath: release, contents: nil)

        #expect(await holder.wait(seconds: 30).status == 0)
        let after = try await signIn(newcomer, "n-3")
        #expect(after.status == 200)
        #expect(after.json?["created"]?.bool == true, "the refused sign-in had created nothing")
        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 30) == 0)
        await simulator.stop()
    }
}
