import AppleSimulator
import Foundation
import JSON
import SQLite
import Testing
import TestSupport

/// `siwa-server rotate-signing-key` (SPEC §8) with the real binary, against the database of a
/// real server, on SQLite and on PostgreSQL: it prints the new kid and nothing secret, the
/// server publishes the key and keeps signing with the old one until the publication lead ends.
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

    @Test(arguments: Engine.available)
    func theCommandPublishesANewKeyThatServersSignWithAfterTheLead(_ engine: Engine) async throws {
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

        // Run while the server serves, on the same configuration.
        let rotated = try await ServerProcess.run(["rotate-signing-key"], environment: environment, folder: folder)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let kid = rotated.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(kid.count == 43, "the kid alone on stdout: \(rotated.stdout)")
        #expect(kid != first[0])
        #expect(rotated.stderr.contains("signs from") && rotated.stderr.contains("stays in the JWKS until"))
        for output in [rotated.stdout, rotated.stderr] {
            #expect(!output.contains("PRIVATE KEY") && !output.contains(#""d":"#), "key material printed")
        }

        // A restart reads the keys at once (a running server re-reads them every 30 s): both are
        // published, and the old one still signs.
        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 30) == 0)
        if engine == .sqlite {
            // At rest the new key is sealed.
            let sqlite = try Database(path: folder + "/data/siwa.sqlite3", readers: 1)
            let sealed = try sqlite.read { try $0.queryOne("SELECT private_key FROM signing_keys WHERE kid = ?", [.text(kid)])?.blob(0) }
            sqlite.close()
            let bytes = try #require(sealed)
            #expect(!String(decoding: bytes, as: UTF8.self).contains("PRIVATE KEY") && bytes.count > 200)
        }
        let restarted = try ServerProcess(["serve"], environment: environment, folder: folder)
        let again = try #require(await restarted.waitForPort())
        // Both published (in no particular order: the rotation may fall in the second the first
        // key was made).
        let published = try await Self.kids(port: again)
        #expect(Set(published) == Set(first + [kid]) && published.count == 2)
        let signer = try await Self.tokenKid(port: again, session: session)
        #expect(signer == first[0])
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
