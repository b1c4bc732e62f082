import AppleSimulator
import JSON

extension ServerProcess {
    /// `SIWA_*` settings that point the binary at `simulator` for the app `com.example.app`,
    /// listening on a free loopback port with JSON logs; `extra` adds or replaces settings.
    static func environment(simulator: AppleIDSimulator, database: String? = nil, _ extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "SIWA_LISTEN": "127.0.0.1:0", "SIWA_LOG_FORMAT": "json", "SIWA_APPLE_BASE_URL": simulator.baseURL,
            "SIWA_TEAM_ID": simulator.teamID, "SIWA_KEY_ID": simulator.keyID, "SIWA_PRIVATE_KEY": simulator.developerKeyPEM,
            "SIWA_CLIENT_IDS": "com.example.app",
        ]
        if let database { environment["SIWA_DATABASE"] = database }
        environment.merge(extra) { $1 }
        return environment
    }

    /// A native sign-in with a fresh identity token for `sub` (no code): the status and the body.
    static func signIn(port: UInt16, simulator: AppleIDSimulator, sub: String, nonce: String) async throws -> (status: Int, json: JSONObject?) {
        let issued = try simulator.issueCode(sub: sub, clientID: "com.example.app", nonce: nonce)
        let body = JSONWriter.string(.object(JSONObject([("identity_token", .string(issued.identityToken)), ("nonce", .string(nonce))])))
        let reply = try await HTTPRequest.send(
            port: port,
            "POST /api/auth/apple HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let status = Int(reply.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, try? JSONParser.parse(reply.components(separatedBy: "\r\n\r\n").dropFirst().joined()).object)
    }
}
