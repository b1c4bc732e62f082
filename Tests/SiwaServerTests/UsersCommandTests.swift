import AppleSimulator
import Foundation
import JSON
import SQLite
import Testing
import TestSupport

/// `siwa-server users …` and the admin API, on the real binary (docs/guides/connecting-your-backend.md): a running server, and
/// the command line changing its database beside it, on SQLite and on PostgreSQL. What the
/// command line ends, the server refuses once it has seen the commit; what it deletes, the server's
/// revocation worker revokes at Apple.
@Suite(.timeLimit(.minutes(3)))
struct UsersCommandTests {
    static let token = "admin-0123456789abcdefghijklmnopqrstuv"

    typealias Engine = DatabaseEngine

    /// A reply split into status, head and body.
    struct Reply {
        let status: Int
        let body: String
        var json: JSONObject? { try? JSONParser.parse(body).object }

        init(_ text: String) {
            let parts = text.components(separatedBy: "\r\n\r\n")
            body = parts.dropFirst().joined(separator: "\r\n\r\n")
            status = Int(parts.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
    }

    static func send(_ port: UInt16, _ method: String, _ path: String, bearer: String?) async throws -> Reply {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 0\r\n"
        if let bearer { text += "Authorization: Bearer \(bearer)\r\n" }
        return Reply(try await HTTPRequest.send(port: port, text + "\r\n"))
    }

    /// Polls `/api/me` until it answers `status`: the server learns of the command line's
    /// changes at its next look for other processes' commits.
    static func meAnswers(_ status: Int, port: UInt16, session: String) async throws -> Bool {
        try await eventually { try await send(port, "GET", "/api/me", bearer: session).status == status }
    }

    @Test(arguments: Engine.available)
    func theCommandLineWorksOnARunningServersDatabase(_ engine: Engine) async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        defer { Task { await simulator.stop() } }
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = engine == .postgres ? try await PostgresCluster.shared().makeDatabase() : folder + "/data/siwa.sqlite3"
        var environment = ServerProcess.environment(simulator: simulator, database: database, [
            // A native code is exchanged without redirect_uri: the app is not the web flow's client.
            "SIWA_CLIENT_IDS": "com.example.app,com.example.web", "SIWA_WEB_CLIENT_ID": "com.example.web",
            "SIWA_ADMIN_TOKEN": Self.token, "SIWA_DATA_KEY": Data(repeating: 4, count: 32).base64EncodedString(),
            "SIWA_WEBHOOK_URL": "http://127.0.0.1:9/siwa-events", "SIWA_WEBHOOK_SECRET": "whsec_" + Data(repeating: 6, count: 32).base64EncodedString(),
        ])
        let server = try ServerProcess(["serve"], environment: environment, folder: folder)
        let port = try #require(await server.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)
        // The command line reads the same settings; its output is parsed, so no terminal.
        environment["SIWA_LOG_FORMAT"] = "text"
        func users(_ arguments: String...) async throws -> (status: Int32, stdout: String, stderr: String) {
            try await ServerProcess.run(["users"] + arguments, environment: environment, folder: folder)
        }

        // Ada signs in twice; Bob signs in with an authorization code, so Apple's tokens are kept.
        let ada = try #require(try await ServerProcess.signIn(port: port, simulator: simulator, sub: "000901.ada.0901", nonce: "n-1").json)
        let adaSession = try #require(ada["session"]?.object?["token"]?.string)
        let adaID = try #require(ada["user"]?.object?["id"]?.string)
        _ = try await ServerProcess.signIn(port: port, simulator: simulator, sub: "000901.ada.0901", nonce: "n-2")
        let issued = try simulator.issueCode(sub: "000902.bob.0902", clientID: "com.example.app", nonce: "n-3")
        let body = JSONWriter.string(.object(JSONObject([
            ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string("n-3")),
        ])))
        let bob = try #require(Reply(try await HTTPRequest.send(
            port: port,
            "POST /api/auth/apple HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")).json)
        let bobSession = try #require(bob["session"]?.object?["token"]?.string, "\(bob)")
        let bobID = try #require(bob["user"]?.object?["id"]?.string)

        // The admin API of the real binary.
        await #expect(try Self.send(port, "GET", "/admin/users", bearer: nil).status == 401)
        let listed = try await Self.send(port, "GET", "/admin/users", bearer: Self.token)
        #expect(listed.status == 200)
        #expect(Set(listed.json?["users"]?.array?.compactMap { $0.object?["id"]?.string } ?? []) == [adaID, bobID])

        // list and show.
        let list = try await users("list", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        #expect(try JSONParser.parse(list.stdout).object?["users"]?.array?.compactMap { $0.object?["id"]?.string } == [adaID, bobID].sorted())
        let filtered = try await users("list", "--apple-sub", "000902.bob.0902")
        #expect(filtered.stdout.contains(bobID) && !filtered.stdout.contains(adaID))
        let paged = try await users("list", "--limit", "1")
        #expect(paged.stdout.contains("more: siwa-server users list --cursor "))
        let shown = try await users("show", adaID)
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("000901.ada.0901"))
        #expect(shown.stdout.contains("sessions         2"))
        #expect(try JSONParser.parse(try await users("show", adaID, "--json").stdout).object?["sessions"]?.array?.count == 2)

        // set-external-id: the running server's USER carries it (cached or not); unique.
        for _ in 0..<2 { #expect(try await Self.send(port, "GET", "/api/me", bearer: adaSession).status == 200) }
        let set = try await users("set-external-id", adaID, "crm-7")
        #expect(set.status == 0, "\(set.stderr)")
        let seen = try await eventually { try await Self.send(port, "GET", "/api/me", bearer: adaSession).json?["external_id"]?.string == "crm-7" }
        #expect(seen, "the server's USER shows the external id the command line set")
        let taken = try await users("set-external-id", bobID, "crm-7")
        #expect(taken.status == 1)
        #expect(taken.stderr.contains("already has external_id"))
        let invalid = try await users("set-external-id", bobID, "")
        #expect(invalid.status != 0 && invalid.status != 1)

        // end-sessions: the server refuses Ada's sessions, cached as they are.
        let ended = try await users("end-sessions", adaID)
        #expect(ended.status == 0, "\(ended.stderr)")
        #expect(ended.stdout.contains("ended 2 sessions of \(adaID)"))
        #expect(try await Self.meAnswers(401, port: port, session: adaSession), "a session the command line ended still works")

        // delete: Bob is gone at once; the server's worker revokes his token at Apple.
        #expect(try await Self.send(port, "GET", "/api/me", bearer: bobSession).status == 200)
        let deleted = try await users("delete", bobID)
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout.contains("queued"))
        #expect(deleted.stdout.contains("user.deleted (reason admin)"))
        #expect(try await Self.meAnswers(401, port: port, session: bobSession))
        let revoked = try await eventually { simulator.calls.contains { $0.endpoint == "revoke" } }
        #expect(revoked, "the running server sent the revocation the command line queued")
        if engine == .sqlite {
            let file = try Database(path: database, readers: 1)
            let events = try file.read { try $0.query("SELECT body FROM webhook_events ORDER BY seq").map { try $0.string(0) } }
            file.close()
            #expect(events.last?.contains(#""type":"user.deleted""#) == true)
            #expect(events.last?.contains(#""reason":"admin""#) == true)
            #expect(events.contains { $0.contains(#""type":"user.updated""#) && $0.contains(#""external_id":"crm-7""#) })
        }

        // Unknown users: exit 1, a line on stderr, nothing on stdout.
        for command in ["show", "delete", "end-sessions"] {
            let unknown = try await users(command, bobID)
            #expect(unknown.status == 1, "\(command)")
            #expect(unknown.stdout.isEmpty)
            #expect(unknown.stderr.contains("no user"))
        }
        await #expect(try users("set-external-id", bobID, "crm-8").status == 1)

        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 30) == 0)
        // Neither the admin token nor a session token reached the logs.
        let logs = server.stdoutText + server.stderrText
        #expect(!logs.contains(Self.token) && !logs.contains(adaSession) && !logs.contains(bobSession))
    }

    @Test func aDatabaseThatIsNotThereIsAConfigurationError() async throws {
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await ServerProcess.run(
            ["users", "list"], environment: ["SIWA_DATABASE": folder + "/nowhere/siwa.sqlite3", "SIWA_LOG_FORMAT": "text"], folder: folder)
        #expect(result.status == 2)
        #expect(result.stderr.contains("database: no database at"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/nowhere"), "nothing was created")
    }
}
