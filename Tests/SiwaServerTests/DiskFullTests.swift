import AppleSimulator
import Foundation
import JSON
import Testing
import TestSupport

private let canMountTmpfs = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount")

/// A full disk under the live database (a 4 MiB tmpfs the test mounts, so it needs root, as CI
/// has): a sign-in fails with a clear 500 and creates nothing, the server keeps answering, and
/// once space is freed the same sign-in succeeds and the database is intact.
@Suite(.enabled(if: canMountTmpfs, "mounting a tmpfs needs root"))
struct DiskFullTests {
    @Test func aFullDiskFailsWritesCleanlyAndSpaceBringsThemBack() async throws {
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let volume = folder + "/volume"
        try FileManager.default.createDirectory(atPath: volume, withIntermediateDirectories: true)
        let mount = try ChildProcess(executable: "/bin/mount", arguments: ["-t", "tmpfs", "-o", "size=4m", "tmpfs", volume], environment: [:])
        try #require(await mount.wait(seconds: 30).status == 0, "mount: \(mount.stderrText)")
        // Runs before the folder is removed (defers run last first); MNT_DETACH even if busy.
        defer { _ = umount2(volume, Int32(MNT_DETACH)) }

        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let database = volume + "/siwa.sqlite3"
        let server = try ServerProcess(["serve"], environment: ServerProcess.environment(simulator: simulator, database: database, [
            "SIWA_DATA_KEY": Data(repeating: 9, count: 32).base64EncodedString(),
        ]), folder: folder)
        let port = try #require(await server.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)
        var nonces = 0
        func signIn(_ sub: String) async throws -> (status: Int, json: JSONObject?) {
            nonces += 1
            return try await ServerProcess.signIn(port: port, simulator: simulator, sub: sub, nonce: "n-\(nonces)")
        }
        #expect(try await signIn("000610.00000000000000000000000000000610.0610").status == 200)

        // Fill what is left of the volume.
        let filler = volume + "/filler"
        let descriptor = open(filler, O_CREAT | O_WRONLY, 0o600)
        try #require(descriptor >= 0)
        let chunk = [UInt8](repeating: 0xA5, count: 16 * 1024)
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        close(descriptor)

        var refused: (status: Int, json: JSONObject?) = (0, nil)
        var refusedSub = ""
        // The WAL may still have room for a page or two: a few sign-ins use it up.
        for index in 0..<50 {
            refusedSub = "000610.00000000000000000000000000000\(700 + index).0610"
            refused = try await signIn(refusedSub)
            if refused.status != 200 { break }
        }
        #expect(refused.status == 500)
        #expect(refused.json?["error"]?.string == "internal_error")
        let health = try await HTTPRequest.get(port: port, path: "/healthz")
        #expect(health.hasPrefix("HTTP/1.1 200"), "the server keeps answering on a full disk")

        try FileManager.default.removeItem(atPath: filler)
        let after = try await signIn(refusedSub)
        #expect(after.status == 200)
        #expect(after.json?["created"]?.bool == true, "the refused sign-in had created nothing")
        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 30) == 0)
        await simulator.stop()

        let check = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3", "-c",
            "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])", database],
            environment: ProcessInfo.processInfo.environment)
        _ = await check.wait(seconds: 30)
        #expect(check.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }
}
