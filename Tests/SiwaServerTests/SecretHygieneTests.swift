import AppleSimulator
import Foundation
import JSON
import OpenSSLCrypto
import SQLite
import Testing
import TestSupport

/// docs/RELIABILITY.md "Secrets never reach logs": the real binary, logging at `trace`, runs every flow that
/// handles a secret — native sign-in with a code, refusals, a notification, the web flow,
/// refresh re-validation, the admin API, access tokens, account deletion, webhooks, password
/// accounts and their reset codes — and then its logs, every error body it sent and `/metrics`
/// are searched for each token, code, secret and key that passed through it, the access-token
/// signing key included.
@Suite struct SecretHygieneTests {
    static let app = "com.example.app"
    static let web = "com.example.web"

    /// A reply split into status and body.
    struct Reply {
        let status: Int
        let head: String
        let body: String

        init(_ text: String) {
            let parts = text.components(separatedBy: "\r\n\r\n")
            head = parts.first ?? ""
            body = parts.dropFirst().joined(separator: "\r\n\r\n")
            status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        }

        func header(_ name: String) -> String? {
            head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }

        var json: JSONObject? { (try? JSONParser.parse(body))?.object }
    }

    @Test func noTokenCodeSecretOrKeyReachesLogsErrorBodiesOrMetrics() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let dataKey = Data((0..<32).map { UInt8($0 * 7 % 256) }).base64EncodedString()
        let adminToken = "adm-" + Data((0..<32).map { UInt8($0 * 13 % 256) }).base64EncodedString()
        // Webhooks on: every change below is signed with the secret and POSTed here.
        let receiver = try WebhookReceiver()
        let server = try ServerProcess(["serve"], environment: ServerProcess.environment(simulator: simulator, [
            "SIWA_WEBHOOK_URL": receiver.url, "SIWA_WEBHOOK_SECRET": receiver.secret,
            "SIWA_LOG_LEVEL": "trace", "SIWA_DATA_KEY": dataKey, "SIWA_ADMIN_TOKEN": adminToken,
            "SIWA_CLIENT_IDS": "\(Self.app),\(Self.web)", "SIWA_WEB_CLIENT_ID": Self.web,
            "SIWA_PUBLIC_URL": "http://localhost:8080", "SIWA_REFRESH_VALIDATION_INTERVAL": "1s",
        ]))
        let port = try #require(await server.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)
        func send(_ method: String, _ path: String, headers: [String: String] = [:], body: String = "") async throws -> Reply {
            var text = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n"
            for (name, value) in headers { text += "\(name): \(value)\r\n" }
            return Reply(try await HTTPRequest.send(port: port, text + "\r\n" + body))
        }
        func json(_ object: [(String, JSONValue)]) -> String { JSONWriter.string(.object(JSONObject(object))) }
        let jsonHeaders = ["Content-Type": "application/json"]

        var secrets: [(what: String, value: String)] = [
            ("data_key", dataKey), ("admin_token", adminToken), ("webhook_secret", receiver.secret),
            ("webhook_secret (base64)", String(receiver.secret.dropFirst(6))),
        ]
        // Every base64 line of the developer key's PEM.
        for line in simulator.developerKeyPEM.split(separator: "\n") where !line.hasPrefix("-----") {
            secrets.append(("private key", String(line)))
        }
        func remember(_ what: String, token: String) {
            secrets.append((what, token))
            // A JWS's signature alone is as telling as the whole token.
            if token.split(separator: ".").count == 3, let signature = token.split(separator: ".").last {
                secrets.append((what + " (signature)", String(signature)))
            }
        }
        var errorBodies: [(what: String, body: String)] = []
        func refused(_ what: String, _ reply: Reply) {
            #expect(reply.status >= 400, "\(what) should be refused: \(reply.status) \(reply.body)")
            errorBodies.append((what, reply.body))
        }

        // 1. Native sign-in with a server nonce, a code and the one-time user object.
        let nonce = try #require(try await send("POST", "/api/auth/apple/nonce").json?["nonce"]?.string)
        let sub = "000700.00000000000000000000000000000700.0700"
        let issued = try simulator.issueCode(sub: sub, clientID: Self.app, nonce: nonce, email: "ada@example.com")
        remember("identity token", token: issued.identityToken)
        remember("authorization code", token: issued.code)
        let signIn = try await send("POST", "/api/auth/apple", headers: jsonHeaders, body: json([
            ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string(nonce)),
            ("user", .object(JSONObject([("name", .object(JSONObject([("firstName", .string("Ada"))])))]))),
        ]))
        let session = try #require(signIn.json?["session"]?.object?["token"]?.string, "\(signIn.body)")
        remember("session token", token: session)

        // 2. Refusals, each carrying a secret: a replayed token, a code Apple refuses, a forged
        //    signature, a bearer that is no session.
        refused("replayed token", try await send("POST", "/api/auth/apple", headers: jsonHeaders, body: json([
            ("identity_token", .string(issued.identityToken)), ("nonce", .string(nonce)),
        ])))
        let second = try simulator.issueCode(sub: sub, clientID: Self.app, nonce: "n-2")
        remember("identity token", token: second.identityToken)
        let unknownCode = "c0123456789abcdef0123456789abcdef.0.zzzz.NotARealCodeAtAll"
        remember("authorization code", token: unknownCode)
        refused("refused code", try await send("POST", "/api/auth/apple", headers: jsonHeaders, body: json([
            ("identity_token", .string(second.identityToken)), ("authorization_code", .string(unknownCode)), ("nonce", .string("n-2")),
        ])))
        let third = try simulator.issueCode(sub: sub, clientID: Self.app, nonce: "n-3")
        let forged = third.identityToken.dropLast(4) + "AAAA"
        remember("identity token", token: String(forged))
        refused("forged signature", try await send("POST", "/api/auth/apple", headers: jsonHeaders, body: json([
            ("identity_token", .string(String(forged))), ("nonce", .string("n-3")),
        ])))
        let notASession = "notAsessionTokenButLongEnoughToBeRecognised0123"
        remember("bearer", token: notASession)
        refused("unknown bearer", try await send("GET", "/api/me", headers: ["Authorization": "Bearer \(notASession)"]))
        #expect(try await send("GET", "/api/me", headers: ["Authorization": "Bearer \(session)"]).status == 200)

        // 3. A notification, then the same payload again and a tampered one.
        let payload = try simulator.notificationPayload(NotificationEvent(type: "email-disabled", sub: sub, email: "ada@example.com"))
        remember("notification", token: payload)
        let notification = json([("payload", .string(payload))])
        #expect(try await send("POST", "/apple/notifications", headers: jsonHeaders, body: notification).status == 200)
        refused("tampered notification", try await send("POST", "/apple/notifications", headers: jsonHeaders, body: json([
            ("payload", .string(String(payload.dropLast(4)) + "AAAA")),
        ])))

        // 4. The web flow: login, Apple's form_post, then the same state again.
        let login = try await send("GET", "/auth/apple/login")
        let location = try #require(login.header("Location"))
        let items: [URLQueryItem] = URLComponents(string: location)?.queryItems ?? []
        var query: [String: String] = [:]
        for item in items where query[item.name] == nil { query[item.name] = item.value ?? "" }
        let state = try #require(query["state"]), webNonce = try #require(query["nonce"])
        let binding = try #require(login.header("Set-Cookie")?.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last.map(String.init))
        remember("state", token: state)
        remember("binding cookie", token: binding)
        let webCode = try simulator.issueCode(sub: sub, clientID: Self.web, nonce: webNonce, redirectURI: "http://localhost:8080/auth/apple/callback")
        remember("identity token", token: webCode.identityToken)
        remember("authorization code", token: webCode.code)
        let form = "state=\(state)&code=\(webCode.code)&id_token=\(webCode.identityToken)"
        let formHeaders = ["Content-Type": "application/x-www-form-urlencoded", "Cookie": "siwa_auth=\(binding)"]
        let callback = try await send("POST", "/auth/apple/callback", headers: formHeaders, body: form)
        #expect(callback.status == 303, "\(callback.body)")
        let webSession = try #require(callback.head.components(separatedBy: "\r\n").first { $0.hasPrefix("Set-Cookie: siwa_session=") })
            .dropFirst("Set-Cookie: siwa_session=".count).prefix { $0 != ";" }
        remember("session token", token: String(webSession))
        refused("reused state", try await send("POST", "/auth/apple/callback", headers: formHeaders, body: form))

        // 5. Refresh re-validation (every second here) sends the refresh token to Apple.
        var validated = false
        for _ in 0..<600 where !validated {
            try await Task.sleep(for: .milliseconds(100))
            validated = simulator.calls.contains { $0.endpoint == "token" && $0.parameters["grant_type"] == "refresh_token" }
        }
        #expect(validated, "the refresh token was re-validated at Apple")

        // 6. The admin API: the token, a guess of the same length and one of another length.
        let admin = ["Authorization": "Bearer \(adminToken)"]
        let listed = try await send("GET", "/admin/users?email=ada%40example.com", headers: admin)
        #expect(listed.status == 200)
        let adminUserID = try #require(listed.json?["users"]?.array?.first?.object?["id"]?.string, "\(listed.body)")
        #expect(try await send("GET", "/admin/users/\(adminUserID)", headers: admin).status == 200)
        var guess = Array(adminToken.utf8)
        guess[guess.count / 2] ^= 1
        let sameLength = String(decoding: guess, as: UTF8.self)
        remember("admin token guess", token: sameLength)
        refused("admin token guess", try await send("GET", "/admin/users", headers: ["Authorization": "Bearer \(sameLength)"]))
        refused("admin token prefix", try await send("GET", "/admin/users/\(adminUserID)", headers: ["Authorization": "Bearer \(adminToken.dropLast(3))"]))
        refused("admin token on an unknown path", try await send("GET", "/admin/secrets", headers: ["Authorization": "Bearer \(sameLength)"]))

        // 6b. Access tokens: issued twice, and refused to a bearer that is no session.
        for _ in 0..<2 {
            let issuedToken = try await send("POST", "/api/token", headers: ["Authorization": "Bearer \(session)"])
            remember("access token", token: try #require(issuedToken.json?["access_token"]?.string, "\(issuedToken.body)"))
        }
        refused("access token for an unknown bearer", try await send("POST", "/api/token", headers: ["Authorization": "Bearer \(notASession)"]))
        #expect(try await send("GET", "/.well-known/jwks.json").status == 200)

        // 6c. Password accounts (docs/guides/passwords-and-email.md): passwords sent, right and wrong, a reset code from the
        //    webhook event, then a code used twice, and the upgrade's password.
        let passwords = ["first Pässword of Ada 1815", "wrong guess at the password", "the reset password of Ada", "a fourth secret phrase"]
        for (index, password) in passwords.enumerated() { secrets.append(("password \(index + 1)", password)) }
        let ada: (String) -> String = { json([("email", .string("ada.pw@example.com")), ("password", .string($0))]) }
        let madePassword = try await send("POST", "/api/auth/password/sign-up", headers: jsonHeaders, body: ada(passwords[0]))
        #expect(madePassword.status == 201, "\(madePassword.body)")
        remember("session token", token: try #require(madePassword.json?["session"]?.object?["token"]?.string))
        refused("wrong password", try await send("POST", "/api/auth/password", headers: jsonHeaders, body: ada(passwords[1])))
        refused("weak password", try await send("POST", "/api/auth/password/sign-up", headers: jsonHeaders, body: json([
            ("email", .string("bob.pw@example.com")), ("password", .string("bob.pw and more words")),
        ])))
        secrets.append(("weak password", "bob.pw and more words"))
        #expect(try await send("POST", "/api/auth/password/reset-request", headers: jsonHeaders, body: json([("email", .string("ada.pw@example.com"))])).status == 202)
        #expect(await receiver.wait { $0.contains { $0.type == "user.password_reset_requested" } })
        let event = try #require(receiver.deliveries.first { $0.type == "user.password_reset_requested" }?.body)
        let resetCode = try #require(try JSONParser.parse(event).object?["data"]?.object?["code"]?.string)
        remember("reset code", token: resetCode)
        let reset = json([("code", .string(resetCode)), ("new_password", .string(passwords[2]))])
        #expect(try await send("POST", "/api/auth/password/reset", headers: jsonHeaders, body: reset).status == 204)
        refused("used reset code", try await send("POST", "/api/auth/password/reset", headers: jsonHeaders, body: reset))
        let upgradeToken = try simulator.issueCode(sub: "000700.00000000000000000000000000000701.0700", clientID: Self.app, nonce: "n-u")
        remember("identity token", token: upgradeToken.identityToken)
        remember("authorization code", token: upgradeToken.code)
        refused("upgrade with a wrong password", try await send("POST", "/api/auth/apple/upgrade", headers: jsonHeaders, body: json([
            ("email", .string("ada.pw@example.com")), ("password", .string(passwords[3])),
            ("identity_token", .string(upgradeToken.identityToken)), ("nonce", .string("n-u")),
        ])))
        let upgraded = try await send("POST", "/api/auth/apple/upgrade", headers: jsonHeaders, body: json([
            ("email", .string("ada.pw@example.com")), ("password", .string(passwords[2])),
            ("identity_token", .string(upgradeToken.identityToken)), ("authorization_code", .string(upgradeToken.code)), ("nonce", .string("n-u")),
        ]))
        #expect(upgraded.status == 200, "\(upgraded.body)")

        // 7. Deletion revokes at Apple.
        #expect(try await send("DELETE", "/api/account", headers: ["Authorization": "Bearer \(session)"]).status == 202)
        // 8. Webhooks: the user's events (created, updated by the notification, deleted) are
        //    delivered, each signed.
        #expect(await receiver.wait { $0.contains { $0.type == "user.deleted" && $0.accepted } })
        let metrics = try await send("GET", "/metrics").body

        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 30) == 0)
        await simulator.stop()
        receiver.stop()

        // Each webhook signature; and the events' bodies (the user's email) are not logged.
        let deliveries = receiver.deliveries
        #expect(deliveries.count >= 3 && deliveries.allSatisfy { $0.signatureVerifies })
        for delivery in deliveries {
            if let signature = delivery.header("webhook-signature") { secrets.append(("webhook signature", String(signature.dropFirst(3)))) }
        }

        // What the server sent Apple: client secrets, codes, refresh and access tokens.
        for call in simulator.calls {
            for (name, value) in call.parameterList where ["client_secret", "code", "refresh_token", "token"].contains(name) {
                remember("\(name) sent to Apple's \(call.endpoint)", token: value)
            }
        }
        #expect(secrets.contains { $0.what.hasPrefix("client_secret") })
        #expect(secrets.contains { $0.what.hasPrefix("refresh_token") })
        #expect(secrets.contains { $0.what.hasPrefix("token sent to Apple's revoke") })

        // The access-token signing key, opened from its row as the server opens it: not one line
        // of its PEM may appear anywhere.
        let database = try Database(path: server.folder + "/data/siwa.sqlite3", readers: 1)
        let rows = try database.read { try $0.query("SELECT kid, private_key FROM signing_keys") }
        // The audit trail, every column of every row, as text: it records every flow above.
        let events = try database.read {
            try $0.query("SELECT id, type, coalesce(user_id, ''), coalesce(session_id, ''), actor, coalesce(ip, ''), coalesce(user_agent, ''), detail FROM events")
                .map { row in try (0..<8).map { try row.string($0) }.joined(separator: " ") }
        }
        database.close()
        let eventsText = events.joined(separator: "\n")
        for type in ["sign_in.succeeded", "sign_in.failed", "password.reset", "session.ended", "user.deleted", "apple_id.linked"] {
            #expect(eventsText.contains(type), "the events table has no \(type)")
        }
        #expect(rows.count == 1)
        let sealer = try AESGCM(key: [UInt8](try #require(Data(base64Encoded: dataKey))))
        for row in rows {
            let kid = try row.string("kid")
            let pem = try sealer.open(try row.blob("private_key"), associatedData: Array("signing_keys.private_key\u{0}\(kid)".utf8))
            for line in String(decoding: pem, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("-----") {
                secrets.append(("access-token signing key", String(line)))
            }
        }
        #expect(secrets.contains { $0.what == "access-token signing key" })
        #expect(secrets.filter { $0.what == "access token" }.count == 2)

        let logs = server.stdoutText + server.stderrText
        // The search means something only if the logs saw these requests.
        #expect(logs.contains("/api/auth/apple") && logs.contains("/auth/apple/callback") && logs.contains("/apple/notifications"))
        #expect(logs.contains("/api/token") && logs.contains("created the access-token signing key"))
        #expect(logs.contains("/api/auth/password/reset") && logs.contains("/api/auth/apple/upgrade"))
        let haystacks = [("logs", logs), ("/metrics", metrics), ("the events table", eventsText)] + errorBodies.map { ("error body of \($0.what)", $0.body) }
        #expect(logs.contains("webhook delivered"))
        for delivery in deliveries {
            #expect(!logs.contains(delivery.body), "the body of \(delivery.type) appears in the logs")
        }
        for secret in secrets where secret.value.count >= 16 {
            // A part of a secret is a leak too: its first and last 24 characters are searched
            // as well (not for a whole JWS, whose first part is the public header).
            var needles = [secret.value]
            if secret.value.count >= 40, secret.value.split(separator: ".").count != 3 {
                needles += [String(secret.value.prefix(24)), String(secret.value.suffix(24))]
            }
            for (place, text) in haystacks {
                for needle in needles {
                    let leaked = text.contains(needle)
                    #expect(!leaked, "\(secret.what) appears in \(place)")
                }
            }
        }
    }

    /// docs/guides/team-transfer.md: the transfer commands' output (stdout, stderr) holds no key, client secret,
    /// team token or data key, and the CSV no `sub` and no email, on both teams' sides.
    @Test func theTransferCommandsLeakNoSecretAndTheCSVNoSubOrEmail() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/a.sqlite3"
        let users = try await TeamTransferRehearsalTests.seed(6, database: database, simulator: simulator, folder: folder)
        // One user revoked before the move: a failure line must name them, not their sub.
        simulator.revokeConsent(sub: users[5].sub, clientID: Self.app)
        let environmentA = TeamTransferRehearsalTests.environmentA(simulator, database: database, ["SIWA_LOG_LEVEL": "trace"])
        let export = try await ServerProcess.run(["transfer", "export", "--target", TeamTransferRehearsalTests.teamB], environment: environmentA, folder: folder)
        #expect(export.status == 1 && export.stderr.contains("user \(users[5].id)"), "\(export.stderr)")
        let csv = export.stdout
        try csv.write(toFile: folder + "/t.csv", atomically: true, encoding: .utf8)
        let moved = try simulator.transfer(clientID: Self.app, toTeam: TeamTransferRehearsalTests.teamB)
        let environmentB = TeamTransferRehearsalTests.environmentB(simulator, team: moved.toTeam, database: database)
        let imported = try await ServerProcess.run(["transfer", "import", folder + "/t.csv"], environment: environmentB, folder: folder)
        #expect(imported.status == 0, "\(imported.stderr)")
        let status = try await ServerProcess.run(["transfer", "status"], environment: environmentB, folder: folder)
        await simulator.stop()

        var secrets: [(what: String, value: String)] = [("data_key", TeamTransferRehearsalTests.dataKey)]
        for (team, pem) in [("A", simulator.developerKeyPEM), ("B", moved.toTeam.developerKeyPEM)] {
            for line in pem.split(separator: "\n") where !line.hasPrefix("-----") { secrets.append(("team \(team)'s private key", String(line))) }
        }
        for call in simulator.calls {
            if let secret = call.parameters["client_secret"] { secrets.append(("client secret to \(call.endpoint)", secret)) }
            if let bearer = call.authorization { secrets.append(("team token", String(bearer.dropFirst("Bearer ".count)))) }
        }
        #expect(secrets.contains { $0.what == "team token" })
        let outputs = [("export", export.stdout + export.stderr), ("import", imported.stdout + imported.stderr), ("status", status.stdout + status.stderr)]
        for secret in secrets where secret.value.count >= 16 {
            for (place, text) in outputs {
                let leaked = text.contains(secret.value)
                #expect(!leaked, "\(secret.what) appears in the output of transfer \(place)")
            }
        }
        for user in users {
            let leaked = outputs.contains { $0.1.contains(user.sub) } || csv.contains(user.sub)
            #expect(!leaked, "a sub appears in the output or the CSV")
        }
        #expect(!csv.contains("@") && !outputs.contains { $0.1.contains("@example.com") || $0.1.contains("@privaterelay") }, "an email appears")
    }
}
