import AppleSimulator
import Foundation
import JSON
import SQLite
import Testing
import TestSupport

/// docs/guides/passwords-and-email.md against the real binary: the Juice story over the API (a password account, its
/// reset by the webhook's code, the upgrade to Sign in with Apple, linking and the last-method
/// rule), and the stored hash read from the database and checked by an independent scrypt
/// (Python's `hashlib.scrypt`).
@Suite(.timeLimit(.minutes(3)))
struct PasswordAccountsServerTests {
    static let app = "com.example.app"

    struct Reply {
        let status: Int
        let body: String
        var json: JSONObject? { (try? JSONParser.parse(body))?.object }
        var error: String? { json?["error"]?.string }
        var token: String? { json?["session"]?.object?["token"]?.string }
        var methods: [String] {
            ((json?["user"]?.object ?? json)?["sign_in_methods"]?.array ?? []).compactMap(\.string)
        }
    }

    static func send(_ port: UInt16, _ method: String, _ path: String, _ body: [(String, JSONValue)]? = nil, bearer: String? = nil) async throws -> Reply {
        let text = body.map { JSONWriter.string(.object(JSONObject($0))) } ?? ""
        var request = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: \(text.utf8.count)\r\n"
        if body != nil { request += "Content-Type: application/json\r\n" }
        if let bearer { request += "Authorization: Bearer \(bearer)\r\n" }
        let reply = try await HTTPRequest.send(port: port, request + "\r\n" + text)
        let parts = reply.components(separatedBy: "\r\n\r\n")
        let status = Int(parts.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        return Reply(status: status, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    static func apple(_ simulator: AppleIDSimulator, sub: String, email: String? = nil) throws -> [(String, JSONValue)] {
        let nonce = UUID().uuidString
        let issued = try simulator.issueCode(sub: sub, clientID: app, nonce: nonce, email: email)
        return [("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string(nonce))]
    }

    @Test func theJuiceStoryOverTheAPIWithTheHashCheckedByPython() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let server = try ServerProcess(["serve"], environment: ServerProcess.environment(simulator: simulator, [
            "SIWA_WEBHOOK_URL": receiver.url, "SIWA_WEBHOOK_SECRET": receiver.secret,
            // The app's codes are exchanged without a redirect_uri: it is not the web client.
            "SIWA_CLIENT_IDS": "\(Self.app),com.example.web", "SIWA_WEB_CLIENT_ID": "com.example.web",
        ]))
        let port = try #require(await server.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)
        let database = try Database(path: server.folder + "/data/siwa.sqlite3", readers: 1)
        let password: (String) -> [(String, JSONValue)] = { [("email", .string("ada@example.com")), ("password", .string($0))] }

        // A password account, and the hash as stored.
        let made = try await Self.send(port, "POST", "/api/auth/password/sign-up", password("pässwörd für Jüice"))
        #expect(made.status == 201 && made.methods == ["password"], "\(made.body)")
        let stored = try #require(try database.read { try $0.queryOne("SELECT hash FROM password_credentials")?.string(0) })
        #expect(stored.hasPrefix("$scrypt$ln=15,r=8,p=1$"))
        if PythonTools.testsEnabled {
            let script = """
                import base64, hashlib, hmac, re, sys
                found = re.fullmatch(r"\\$scrypt\\$ln=(\\d+),r=(\\d+),p=(\\d+)\\$([A-Za-z0-9+/]+)\\$([A-Za-z0-9+/]+)", sys.argv[2])
                ln, r, p, salt, expected = found.groups()
                b64 = lambda s: base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
                derive = lambda password: hashlib.scrypt(password.encode(), salt=b64(salt), n=2 ** int(ln), r=int(r), p=int(p),
                                                         maxmem=64 * 1024 * 1024, dklen=len(b64(expected)))
                print(hmac.compare_digest(derive(sys.argv[1]), b64(expected)), hmac.compare_digest(derive("wrong"), b64(expected)))
                """
            #expect(try await PythonTools.run(script, ["pässwörd für Jüice", stored]) == "True False\n")
        }

        // Signed out, signed in again; a wrong password is refused.
        #expect(try await Self.send(port, "POST", "/api/logout", bearer: made.token).status == 204)
        #expect(try await Self.send(port, "POST", "/api/auth/password", password("wrong horse battery")).error == "invalid_credentials")
        let signedIn = try await Self.send(port, "POST", "/api/auth/password", password("pässwörd für Jüice"))
        #expect(signedIn.status == 200, "\(signedIn.body)")

        // Forgotten: the code arrives in the webhook event; the reset ends every session.
        #expect(try await Self.send(port, "POST", "/api/auth/password/reset-request", [("email", .string("ADA@example.com"))]).status == 202)
        let code = try #require(await receiver.passwordResetRequests(1)?.first?["code"])
        #expect(try await Self.send(port, "POST", "/api/auth/password/reset", [("code", .string(code)), ("new_password", .string("a new long password"))]).status == 204)
        #expect(try await Self.send(port, "GET", "/api/me", bearer: signedIn.token).status == 401)
        #expect(try await Self.send(port, "POST", "/api/auth/password/reset", [("code", .string(code)), ("new_password", .string("another password!"))]).error == "invalid_grant")

        // Sign in with Apple with the same verified email: no silent merge.
        let sub = "000500.00000000000000000000000000000500.0500"
        let merge = try await Self.send(port, "POST", "/api/auth/apple", try Self.apple(simulator, sub: sub, email: "ada@example.com"))
        #expect(merge.status == 409 && merge.error == "account_exists")

        // The upgrade: the password and the token, then one account signing in with Apple.
        let upgraded = try await Self.send(port, "POST", "/api/auth/apple/upgrade", password("a new long password") + (try Self.apple(simulator, sub: sub)))
        #expect(upgraded.status == 200 && upgraded.methods == ["apple"], "\(upgraded.body)")
        let apple = try await Self.send(port, "POST", "/api/auth/apple", try Self.apple(simulator, sub: sub))
        #expect(apple.status == 200 && apple.json?["user"]?.object?["id"] == made.json?["user"]?.object?["id"])

        // A password set again, then Apple unlinked; the password is the last way in.
        let set = try await Self.send(port, "PUT", "/api/account/password", [("new_password", .string("a third long password"))], bearer: apple.token)
        #expect(set.status == 204, "\(set.body)")
        let unlinked = try await Self.send(port, "DELETE", "/api/account/apple", bearer: apple.token)
        #expect(unlinked.status == 200 && unlinked.methods == ["password"], "\(unlinked.body)")
        #expect(try await Self.send(port, "DELETE", "/api/account/password", bearer: apple.token).error == "last_sign_in_method")
        // The unlink's revocation ends the grant at Apple with every code issued for it: linking
        // again waits for it, else a code issued before the worker's call (it looks every second)
        // dies at the exchange. It failed this way on a loaded machine.
        #expect(try await eventually { try database.read { try $0.queryOne("SELECT count(*) FROM revocations")?.int(0) } == 0 })
        let linked = try await Self.send(port, "POST", "/api/account/apple", try Self.apple(simulator, sub: sub), bearer: apple.token)
        #expect(linked.status == 200 && linked.methods == ["apple", "password"], "\(linked.status) \(linked.body)")

        database.close()
        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 30) == 0)
        await simulator.stop()
    }
}
