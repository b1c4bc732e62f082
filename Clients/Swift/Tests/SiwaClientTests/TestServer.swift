import Foundation
import SiwaClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real siwa-server and its Apple ID simulator, as two child processes on loopback with a
/// scratch folder: `siwa-server apple-sim` plays Apple (and the phone: `POST /sim/codes` mints
/// what `ASAuthorizationAppleIDCredential` holds), `siwa-server serve` is the server under test.
/// One pair serves every test (each test uses Apple IDs and emails of its own), which keeps the
/// run short. The binary: `SIWA_SERVER_BIN`, else the server package's debug build.
final class TestServer: Sendable {
    static let shared = Task { try await TestServer() }

    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["SIWA_SERVER_BIN"], !path.isEmpty { return path }
        // Tests/SiwaClientTests/TestServer.swift → the package → the repository.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return package.appendingPathComponent("../../.build/debug/siwa-server").standardizedFileURL.path
    }

    let baseURL: URL
    let simulatorURL: URL
    let webhooks: WebhookSink
    let folder: URL
    private let simulator: ChildProcess
    private let server: ChildProcess

    private init() async throws {
        let binary = Self.binary
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw SiwaTestFailure("no siwa-server at \(binary): build the server (swift build at the repository's root) or set SIWA_SERVER_BIN")
        }
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("siwa-client-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        ExitCleanup.remove(folder)
        let inherited = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SIWA_") }

        simulator = try ChildProcess(
            executable: binary, arguments: ["apple-sim", "--port", "0", "--state-dir", folder.appendingPathComponent("apple-sim").path],
            environment: inherited, logURL: folder.appendingPathComponent("apple-sim.log"))
        // The simulator prints the settings that point a server at it.
        let simulator = self.simulator
        guard let banner = try await eventually(seconds: 60, { simulator.output.contains("SIWA_PRIVATE_KEY_FILE=") ? simulator.output : nil }) else {
            throw SiwaTestFailure("the Apple ID simulator did not start: \(simulator.output)")
        }
        func setting(_ name: String) -> String {
            banner.split(separator: "\n").lazy.compactMap { line -> String? in
                guard let range = line.range(of: "\(name)=") else { return nil }
                return String(line[range.upperBound...]).trimmingCharacters(in: .whitespaces)
            }.first ?? ""
        }
        simulatorURL = URL(string: setting("SIWA_APPLE_BASE_URL"))!

        webhooks = try WebhookSink()
        var dataKey = [UInt8](repeating: 0, count: 32)
        var secret = [UInt8](repeating: 0, count: 32)
        for index in 0..<32 {
            dataKey[index] = .random(in: .min ... .max)
            secret[index] = .random(in: .min ... .max)
        }
        var environment = inherited
        environment.merge([
            "SIWA_LISTEN": "127.0.0.1:0", "SIWA_PUBLIC_URL": "http://localhost", "SIWA_LOG_FORMAT": "json",
            "SIWA_DATABASE": folder.appendingPathComponent("siwa.sqlite3").path,
            "SIWA_APPLE_BASE_URL": setting("SIWA_APPLE_BASE_URL"), "SIWA_TEAM_ID": setting("SIWA_TEAM_ID"),
            "SIWA_KEY_ID": setting("SIWA_KEY_ID"), "SIWA_PRIVATE_KEY_FILE": setting("SIWA_PRIVATE_KEY_FILE"),
            "SIWA_CLIENT_IDS": "com.example.app,com.example.web", "SIWA_WEB_CLIENT_ID": "com.example.web",
            "SIWA_ALLOWED_RETURN_SCHEMES": "com.example.app", "SIWA_DATA_KEY": Data(dataKey).base64EncodedString(),
            "SIWA_WEBHOOK_URL": "http://127.0.0.1:\(webhooks.port)/hooks", "SIWA_WEBHOOK_SECRET": "whsec_" + Data(secret).base64EncodedString(),
        ]) { $1 }
        server = try ChildProcess(
            executable: binary, arguments: ["serve"], environment: environment, logURL: folder.appendingPathComponent("serve.log"))
        let server = self.server
        // The port from the `listening` log line.
        guard
            let port = try await eventually(seconds: 60, { () -> String? in
                for line in server.output.split(separator: "\n") where line.contains("\"listening\"") {
                    if let range = line.range(of: #""address":"127.0.0.1:"#) { return String(line[range.upperBound...].prefix { $0.isNumber }) }
                }
                if !server.process.isRunning { throw SiwaTestFailure("siwa-server serve exited: \(server.output)") }
                return nil
            })
        else { throw SiwaTestFailure("siwa-server serve did not listen: \(server.output)") }
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
        // Ready: the database answers and the simulator's keys are loaded.
        let readyz = baseURL.appendingPathComponent("readyz")
        guard try await eventually(seconds: 60, { try? await Self.raw("GET", readyz).status == 200 ? true : nil }) != nil else {
            throw SiwaTestFailure("siwa-server never became ready: \(server.output)")
        }
    }

    /// A client of this server.
    func client(
        store: any SessionStore = MemorySessionStore(), provider: (any CredentialStateProvider)? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) -> SiwaClient {
        SiwaClient(baseURL: baseURL, store: store, credentialStateProvider: provider, deviceName: "Test iPhone", now: now)
    }

    /// A fresh Apple user identifier, shaped as Apple's.
    static func newSub() -> String {
        "000\(Int.random(in: 100...999)).\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()).\(Int.random(in: 1000...9999))"
    }

    /// What the phone holds after Apple's sheet: the simulator mints the identity token (carrying
    /// `nonce.hashed`, as an app sets on its request) and the code; Apple gives the name and
    /// email only on a first authorization, which the test decides.
    func credential(
        sub: String, nonce: AppleNonce, fullName: PersonName? = nil, email: String? = nil, clientID: String = "com.example.app",
        redirectURI: String? = nil
    ) async throws -> AppleCredential {
        var body: [String: Any] = ["sub": sub, "client_id": clientID, "nonce": nonce.hashed]
        if let email { body["email"] = email }
        if let redirectURI { body["redirect_uri"] = redirectURI }
        let answer = try await Self.raw("POST", simulatorURL.appendingPathComponent("sim/codes"), json: body)
        guard answer.status == 200, let object = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
            let token = object["id_token"] as? String, let code = object["code"] as? String
        else { throw SiwaTestFailure("/sim/codes answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))") }
        return AppleCredential(user: sub, identityToken: token, authorizationCode: code, fullName: fullName, email: email, realUserStatus: .likelyReal)
    }

    /// `client` signs in with a fresh authorization of `sub` (no name: not a first one).
    @discardableResult
    func signIn(_ client: SiwaClient, sub: String = TestServer.newSub()) async throws -> SignInResult {
        let nonce = AppleNonce()
        return try await client.signIn(with: try await credential(sub: sub, nonce: nonce), nonce: nonce.raw)
    }

    /// The status the server gives `path` for `token`, asked without the client.
    func status(_ method: String, _ path: String, token: String) async throws -> Int {
        try await Self.raw(method, baseURL.appendingPathComponent(path), headers: ["Authorization": "Bearer \(token)"]).status
    }

    static func raw(_ method: String, _ url: URL, headers: [String: String] = [:], json: [String: Any]? = nil) async throws -> (status: Int, body: Data) {
        var headers = headers
        var body: Data?
        if let json {
            body = try JSONSerialization.data(withJSONObject: json)
            headers["Content-Type"] = "application/json"
        }
        let answer = try await URLSessionTransport().send(HTTPTransportRequest(method: method, url: url, headers: headers, body: body))
        return (answer.status, answer.body)
    }
}
