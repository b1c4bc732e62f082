import AppleSimulator
import Foundation
import JSON
import SQLite
import Testing
import TestSupport

/// `siwa-server rotate-signing-key` (docs/guides/connecting-your-backend.md) with the real binary, against the database
/// of a running server, on SQLite and on PostgreSQL: it prints the new kid and nothing secret,
/// the server signs with the new key from its next re-read of the keys, and `--retire-old`
/// leaves only the new key in the JWKS.
@Suite(.timeLimit(.minutes(2)))
struct RotateSigningKeyCommandTests {
    enum Engine: String, CaseIterable, Sendable {
        case sqlite, postgres
        static var available: [Engine] { PostgresCluster.testsEnabled ? allCases : [.sqlite] }
    }

    static let dataKey = Data(repeating: 3, count: 32).base64EncodedString()

    static func body(_ reply: String) -> JSONObject? {
        try? JSONParser.parse(reply.components(separatedBy: "\r\n\r\n").dropFirst().joined()).object
    }

    static func kids(port: UInt16) async throws -> [String] {
        let keys = try #require(body(try await HTTPRequest.get(port: port, path: "/.well-known/jwks.json"))?["keys"]?.array)
        return keys.compactMap { $0.object?["kid"]?.string }
    }

    /// The kid in the header of a fresh access token for `session`.
    static func tokenKid(port: UInt16, session: String) async throws -> String? {
        let reply = try await HTTPRequest.send(
            port: port, "POST /api/token HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(session)\r\nContent-Length: 0\r\n\r\n")
        let token = try #require(body(reply)?["access_token"]?.string, "\(reply)")
        var header = String(token.prefix { $0 != "." }).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while header.count % 4 != 0 { header += "=" }
        return try JSONParser.parse(Array(try #require(Data(base64Encoded: header)))).object?["kid"]?.string
    }

    /// Polls (at most 30 s: the server re-reads its keys every 5 s) until `condition` holds.
    static func within30Seconds(_ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    @Test(arguments: Engine.available)
    func theCommandsKeySignsOnARunningServerWithinAPollAndRetireOldEmptiesTheJWKS(_ engine: Engine) async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = engine == .postgres ? try await PostgresCluster.shared().makeDatabase() : nil
        let environment = ServerProcess.environment(simulator: simulator, database: database, ["SIWA_DATA_KEY": Self.dataKey])

        let server = try ServerProcess(["serve"], environment: environment, folder: folder)
        let port = try #require(await server.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)
        let first = try await Self.kids(port: port)
        #expect(first.count == 1)
        let signIn = try await ServerProcess.signIn(
            port: port, simulator: simulator, sub: "000920.00000000000000000000000000000920.0920", nonce: "n-rotate")
        let session = try #require(signIn.json?["session"]?.object?["token"]?.string)
        #expect(try await Self.tokenKid(port: port, session: session) == first[0])

        // Run while the server serves, on the same configuration (the same SQLite file, or the
        // same PostgreSQL database).
        let rotated = try await ServerProcess.run(["rotate-signing-key"], environment: environment, folder: folder)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let kid = rotated.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(kid.count == 43, "the kid alone on stdout: \(rotated.stdout)")
        #expect(kid != first[0])
        #expect(rotated.stderr.contains("signing from now") && rotated.stderr.contains("stays in the JWKS until"), "\(rotated.stderr)")
        // The running server's next tokens carry the new kid once it re-reads the keys; the old
        // key stays published.
        #expect(try await Self.within30Seconds { try await Self.tokenKid(port: port, session: session) == kid })
        #expect(Set(try await Self.kids(port: port)) == Set(first + [kid]))

        // A key that leaked: --retire-old leaves only the newest key in the JWKS.
        let retiring = try await ServerProcess.run(["rotate-signing-key", "--retire-old"], environment: environment, folder: folder)
        #expect(retiring.status == 0, "\(retiring.stderr)")
        let newest = retiring.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(retiring.stderr.contains("removed from the JWKS now (--retire-old)"), "\(retiring.stderr)")
        #expect(try await Self.within30Seconds { try await Self.kids(port: port) == [newest] })
        #expect(try await Self.tokenKid(port: port, session: session) == newest)
        for output in [rotated.stdout, rotated.stderr, retiring.stdout, retiring.stderr] {
            #expect(!output.contains("PRIVATE KEY") && !output.contains(#""d":"#), "key material printed")
        }

        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 30) == 0)
        if engine == .sqlite {
            // At rest the new key is sealed.
            let sqlite = try Database(path: folder + "/data/siwa.sqlite3", readers: 1)
            let sealed = try sqlite.read { try $0.queryOne("SELECT private_key FROM signing_keys WHERE kid = ?", [.text(newest)])?.blob(0) }
            sqlite.close()
            let bytes = try #require(sealed)
            #expect(!String(decoding: bytes, as: UTF8.self).contains("PRIVATE KEY") && bytes.count > 200)
        }
        // A restart signs with the newest key from the first token.
        let restarted = try ServerProcess(["serve"], environment: environment, folder: folder)
        let again = try #require(await restarted.waitForPort())
        #expect(try await Self.kids(port: again) == [newest])
        #expect(try await Self.tokenKid(port: again, session: session) == newest)
        restarted.signal(SIGTERM)
        #expect(await restarted.wait(seconds: 30) == 0)
        for output in [server.stdoutText, server.stderrText, restarted.stdoutText, restarted.stderrText] {
            #expect(!output.contains("PRIVATE KEY"))
        }
        await simulator.stop()
    }

    /// On PostgreSQL the command needs the `data_key` every instance seals with: without it,
    /// it fails with the reason and exit 1.
    @Test(.enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed"))
    func onPostgresWithoutADataKeyTheCommandFailsClearly() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        let result = try await ServerProcess.run(["rotate-signing-key"], environment: ["SIWA_DATABASE": url])
        #expect(result.status == 1)
        #expect(result.stderr.contains("data_key must be set"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
