import AppleSimulator
import Foundation
import HTTPServer
import JSON
import Testing
import TestSupport
@testable import SiwaApp

/// The admin API of docs/guides/connecting-your-backend.md, in process with a socket sample: the token, every route's
/// answer and every refusal, on SQLite and on PostgreSQL.
@Suite(.timeLimit(.minutes(3)))
struct AdminRoutesTests {
    static let token = "admin-0123456789abcdefghijklmnopqrstuv"
    static let app = "com.example.admin"

    typealias Engine = DatabaseEngine

    struct Reply {
        let status: Int
        let head: String
        let body: String
        var json: JSONObject? { try? JSONParser.parse(body).object }

        func header(_ name: String) -> String? {
            head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }

        var error: String? { json?["error"]?.string }
    }

    final class Fixture: Stoppable {
        let harness: TestApp
        let engine: Engine

        init(
            _ engine: Engine, transport: Transport = .inProcess, adminToken: String? = AdminRoutesTests.token,
            configure: @escaping (inout Configuration) -> Void = { _ in }
        ) async throws {
            self.engine = engine
            harness = try await TestApp(engine: engine, transport: transport) {
                $0.clientIDs = [AdminRoutesTests.app]
                $0.adminToken = adminToken
                // Events are appended to the outbox (nothing here delivers them).
                $0.webhookURL = "http://127.0.0.1:9/siwa-events"
                $0.webhookSecret = [UInt8](repeating: 3, count: 32)
                configure(&$0)
            }
            _ = try await harness.waitUntilReady()
        }

        var simulator: AppleIDSimulator { harness.simulator }

        /// A native sign-in for `sub` (with the authorization code, so Apple's tokens are kept).
        func signIn(sub: String, email: String? = nil, withCode: Bool = false, device: String = "iPhone") async throws -> (session: String, userID: String) {
            let issued = try simulator.issueCode(sub: sub, clientID: AdminRoutesTests.app, nonce: "n", email: email)
            var body: [(String, JSONValue)] = [("identity_token", .string(issued.identityToken)), ("nonce", .string("n")), ("device_name", .string(device))]
            if withCode { body.append(("authorization_code", .string(issued.code))) }
            let reply = try await send("POST", "/api/auth/apple", bearer: nil, body: JSONWriter.string(.object(JSONObject(body))))
            return (try #require(reply.json?["session"]?.object?["token"]?.string, "\(reply.body)"),
                    try #require(reply.json?["user"]?.object?["id"]?.string))
        }

        /// A request with `Authorization: Bearer <bearer>` (the admin token unless told otherwise).
        func send(
            _ method: String, _ path: String, bearer: String? = AdminRoutesTests.token, authorization: String? = nil, body: String = ""
        ) async throws -> Reply {
            var headers: [(String, String)] = []
            if !body.isEmpty { headers.append(("Content-Type", "application/json")) }
            if let authorization { headers.append(("Authorization", authorization)) } else if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
            let reply = try await harness.send(HTTPMethod(method), path, headers: headers, body: body)
            let head = (["HTTP/1.1 \(reply.status)"] + reply.fields.map { "\($0.name): \($0.value)" }).joined(separator: "\r\n")
            return Reply(status: reply.status, head: head, body: reply.body)
        }

        func me(_ session: String) async throws -> Reply {
            try await send("GET", "/api/me", bearer: session)
        }

        /// The outbox's event bodies in order.
        func events() throws -> [String]? {
            try StoreSQL(harness.application.store).read {
                try $0.query("SELECT body FROM webhook_events ORDER BY seq", []).map { try $0.string(0) }
            }
        }

        func stop() async { await harness.stop() }
    }

    static func sub(_ n: Int) -> String { "000900.\(String(repeating: "0", count: 28))\(1000 + n).0900" }

    // MARK: - The token

    @Test(arguments: DatabaseEngine.available)
    func withoutAnAdminTokenEveryAdminPathIs404(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine, adminToken: nil)) { fixture in
            for (method, path) in [
                ("GET", "/admin/users"), ("GET", "/admin/users/usr_x"), ("PATCH", "/admin/users/usr_x"), ("DELETE", "/admin/users/usr_x"),
                ("DELETE", "/admin/users/usr_x/sessions"), ("GET", "/admin"), ("GET", "/admin/nothing"),
            ] {
                let reply = try await fixture.send(method, path)
                #expect(reply.status == 404, "\(method) \(path)")
                #expect(reply.error == "not_found")
            }
        }
    }

    /// The socket sample: over the socket, since it reads the access log, which the connection writes.
    @Test(arguments: DatabaseEngine.available)
    func theTokenIsRequiredWholeAndComparedWithoutRegardToLength(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine, transport: .socket)) { fixture in
            let (session, _) = try await fixture.signIn(sub: Self.sub(1))
            let token = Self.token
            var sameLength = Array(token.utf8)
            sameLength[sameLength.count - 1] ^= 1
            let refusals: [(String, String?)] = [
                ("no header", nil), ("same length, last byte wrong", "Bearer " + String(decoding: sameLength, as: UTF8.self)),
                ("a prefix", "Bearer " + token.dropLast()), ("longer", "Bearer " + token + "x"), ("empty", "Bearer "), ("scheme only", "Bearer"),
                ("basic", "Basic " + Data("admin:\(token)".utf8).base64EncodedString()), ("no scheme", token), ("a session", "Bearer " + session),
            ]
            for (what, authorization) in refusals {
                let reply = try await fixture.send("GET", "/admin/users", bearer: nil, authorization: authorization)
                #expect(reply.status == 401, "\(what)")
                #expect(reply.error == "unauthenticated", "\(what)")
                #expect(reply.header("WWW-Authenticate") == "Bearer", "\(what)")
            }
            // The scheme is case-insensitive; spaces around the token are not part of it.
            await #expect(try fixture.send("GET", "/admin/users", bearer: nil, authorization: "bearer " + token).status == 200)
            await #expect(try fixture.send("GET", "/admin/users", bearer: nil, authorization: "BEARER   \(token) ").status == 200)

            // The route table is shown to the token's holder only.
            for (method, path, status) in [("GET", "/admin/nothing", 404), ("GET", "/admin", 404), ("POST", "/admin/users", 405), ("PUT", "/admin/users/usr_x", 405)] {
                let anonymous = try await fixture.send(method, path, bearer: nil)
                #expect(anonymous.status == 401, "\(method) \(path)")
                #expect(anonymous.header("Allow") == nil)
                let admin = try await fixture.send(method, path)
                #expect(admin.status == status, "\(method) \(path)")
            }
            #expect(try await fixture.send("POST", "/admin/users").header("Allow") == "GET, HEAD")
            // Paths that only begin like the admin API's are not its.
            await #expect(try fixture.send("GET", "/administrator", bearer: nil).status == 404)

            // Neither the token nor a wrong one reaches the access log or the metrics.
            let metrics = try await fixture.harness.get("/metrics").body
            fixture.harness.sink.flush()
            let logs = fixture.harness.lines.all.joined(separator: "\n")
            #expect(logs.contains("/admin/users"))
            for secret in [token, String(decoding: sameLength, as: UTF8.self), String(token.prefix(24)), String(token.suffix(24))] {
                #expect(!logs.contains(secret))
                #expect(!metrics.contains(secret))
            }
        }
    }

    // MARK: - Routes

    @Test(arguments: Engine.available)
    func usersAreListedAPageAtATimeAndFiltered(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            var ids: [String] = []
            for n in 0..<5 {
                ids.append(try await fixture.signIn(sub: Self.sub(10 + n), email: n < 3 ? "team@example.com" : "solo\(n)@example.com").userID)
            }
            await #expect(try fixture.send("PATCH", "/admin/users/\(ids[1])", body: #"{"external_id":"crm-1"}"#).status == 200)

            let all = try await fixture.send("GET", "/admin/users")
            #expect(all.status == 200)
            #expect(all.header("Cache-Control") == "no-store")
            #expect(all.json?["users"]?.array?.compactMap { $0.object?["id"]?.string } == ids.sorted())
            #expect(all.json?["next_cursor"] == .null)
            #expect(all.json?["users"]?.array?.first?.object?.keys.contains("sign_in_methods") == true)

            // Two at a time, following next_cursor to the end.
            var seen: [String] = []
            var path = "/admin/users?limit=2"
            var pages = 0
            while true {
                let page = try await fixture.send("GET", path)
                #expect(page.status == 200, "\(page.body)")
                seen += page.json?["users"]?.array?.compactMap { $0.object?["id"]?.string } ?? []
                pages += 1
                guard let next = page.json?["next_cursor"]?.string, pages < 10 else { break }
                path = "/admin/users?limit=2&cursor=\(next)"
            }
            #expect(seen == ids.sorted())
            #expect(pages == 3)

            // A filter pages too.
            let team = try await fixture.send("GET", "/admin/users?email=team%40example.com&limit=2")
            let teamIDs = Array(ids[0..<3]).sorted()
            #expect(team.json?["users"]?.array?.compactMap { $0.object?["id"]?.string } == Array(teamIDs[0..<2]))
            let cursor = try #require(team.json?["next_cursor"]?.string)
            let rest = try await fixture.send("GET", "/admin/users?email=team%40example.com&limit=2&cursor=\(cursor)")
            #expect(rest.json?["users"]?.array?.compactMap { $0.object?["id"]?.string } == [teamIDs[2]])
            #expect(rest.json?["next_cursor"] == .null)

            let bySub = try await fixture.send("GET", "/admin/users?apple_sub=\(Self.sub(13))")
            #expect(bySub.json?["users"]?.array?.compactMap { $0.object?["id"]?.string } == [ids[3]])
            let byExternalID = try await fixture.send("GET", "/admin/users?external_id=crm-1")
            #expect(byExternalID.json?["users"]?.array?.first?.object?["external_id"]?.string == "crm-1")
            #expect(byExternalID.json?["users"]?.array?.count == 1)
            let nobody = try await fixture.send("GET", "/admin/users?email=nobody%40example.com")
            #expect(nobody.body == #"{"users":[],"next_cursor":null}"#)

            for query in ["limit=0", "limit=201", "limit=ten", "cursor=not-ours", "cursor=", "emial=x", "email=", "email=a&email=b", "email=%FF"] {
                let reply = try await fixture.send("GET", "/admin/users?" + query)
                #expect(reply.status == 400, "\(query)")
                #expect(reply.error == "invalid_request", "\(query)")
            }
        }
    }

    @Test(arguments: Engine.available)
    func aUserIsShownWithTheSessionsThatStillWork(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let (first, id) = try await fixture.signIn(sub: Self.sub(20), device: "Ada's iPhone")
            let (second, _) = try await fixture.signIn(sub: Self.sub(20), device: "Ada's Mac")
            let (third, _) = try await fixture.signIn(sub: Self.sub(20), device: "Ada's iPad")
            await #expect(try fixture.send("POST", "/api/logout", bearer: third).status == 204)

            let reply = try await fixture.send("GET", "/admin/users/\(id)")
            #expect(reply.status == 200)
            #expect(reply.header("Cache-Control") == "no-store")
            let user = try #require(reply.json)
            let me = try #require(try await fixture.me(first).json)
            // USER exactly as /api/me has it, then the sessions.
            #expect(Array(user.keys.dropLast()) == me.keys)
            #expect(user.keys.last == "sessions")
            for key in me.keys { #expect(user[key] == me[key], "\(key)") }
            let sessions = (user["sessions"]?.array ?? []).compactMap { $0.object }
            #expect(sessions.count == 2)
            #expect(Set(sessions.compactMap { $0["device_name"]?.string }) == ["Ada's iPhone", "Ada's Mac"])
            for session in sessions {
                #expect(session.keys == ["id", "created_at", "last_seen_at", "expires_at", "device_name", "method", "ip", "user_agent"])
            }
            _ = second

            let unknown = try await fixture.send("GET", "/admin/users/usr_00000000000000000000000000000000")
            #expect(unknown.status == 404)
            #expect(unknown.error == "not_found")
        }
    }

    @Test(arguments: Engine.available)
    func theExternalIDIsSetUniqueValidatedAndCleared(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let (ada, adaID) = try await fixture.signIn(sub: Self.sub(30))
            let (_, bobID) = try await fixture.signIn(sub: Self.sub(31))

            let set = try await fixture.send("PATCH", "/admin/users/\(adaID)", body: #"{"external_id":"crm-ada"}"#)
            #expect(set.status == 200)
            #expect(set.json?["id"]?.string == adaID)
            #expect(set.json?["external_id"]?.string == "crm-ada")
            // USER carries it everywhere.
            #expect(try await fixture.me(ada).json?["external_id"]?.string == "crm-ada")

            let taken = try await fixture.send("PATCH", "/admin/users/\(bobID)", body: #"{"external_id":"crm-ada"}"#)
            #expect(taken.status == 409)
            #expect(taken.error == "conflict")
            #expect(try await fixture.send("GET", "/admin/users/\(bobID)").json?["external_id"] == .null)

            for body in ["", "[]", "null", #"{"external_id":""}"#, #"{"external_id":7}"#, #"{"external_id":"a\nb"}"#, #"{"externalId":"x"}"#,
                         #"{"external_id":"x","email":"y"}"#, #"{"external_id":"\#(String(repeating: "x", count: 257))"}"#, "{"] {
                let reply = try await fixture.send("PATCH", "/admin/users/\(adaID)", body: body)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.error == "invalid_request", "\(body)")
            }
            #expect(try await fixture.me(ada).json?["external_id"]?.string == "crm-ada", "refusals change nothing")

            let unknown = try await fixture.send("PATCH", "/admin/users/usr_unknown", body: #"{"external_id":"crm-x"}"#)
            #expect(unknown.status == 404)
            #expect(unknown.error == "not_found")

            let cleared = try await fixture.send("PATCH", "/admin/users/\(adaID)", body: #"{"external_id":null}"#)
            #expect(cleared.status == 200)
            #expect(cleared.json?["external_id"] == .null)
            // Now Bob may have it.
            #expect(try await fixture.send("PATCH", "/admin/users/\(bobID)", body: #"{"external_id":"crm-ada"}"#).status == 200)

            if let events = try fixture.events() {
                let updates = events.filter { $0.contains(#""type":"user.updated""#) }
                #expect(updates.count == 3, "set, cleared, set on Bob: \(updates)")
                #expect(updates.first?.contains(#""external_id":"crm-ada""#) == true)
            }
        }
    }

    @Test(arguments: Engine.available)
    func deletingAUserRevokesAtAppleEndsItsSessionsAndSaysAdmin(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let (session, id) = try await fixture.signIn(sub: Self.sub(40), withCode: true)
            let (_, bystanderID) = try await fixture.signIn(sub: Self.sub(41))
            for _ in 0..<2 { await #expect(try fixture.me(session).status == 200) }

            let reply = try await fixture.send("DELETE", "/admin/users/\(id)")
            #expect(reply.status == 202)
            #expect(reply.body == #"{"status":"deleted","apple_revocation":"done"}"#)
            let revoke = try #require(fixture.simulator.calls.first { $0.endpoint == "revoke" })
            #expect(revoke.parameters["token_type_hint"] == "refresh_token")
            await #expect(try fixture.me(session).status == 401)
            await #expect(try fixture.send("GET", "/admin/users/\(id)").status == 404)
            await #expect(try fixture.send("GET", "/admin/users/\(bystanderID)").status == 200)

            let again = try await fixture.send("DELETE", "/admin/users/\(id)")
            #expect(again.status == 404)
            #expect(again.error == "not_found")
            if let events = try fixture.events() {
                let deleted = try #require(events.last)
                #expect(deleted.contains(#""type":"user.deleted""#))
                #expect(deleted.contains(#""reason":"admin""#))
                #expect(deleted.contains(id))
            }
        }
    }

    @Test(arguments: Engine.available)
    func endingAUsersSessionsIsRefusedAtOnce(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let (first, id) = try await fixture.signIn(sub: Self.sub(50))
            let (second, _) = try await fixture.signIn(sub: Self.sub(50))
            let (bystander, _) = try await fixture.signIn(sub: Self.sub(51))
            // Used twice each: held in the session cache.
            for session in [first, second, first, second] { await #expect(try fixture.me(session).status == 200) }

            let reply = try await fixture.send("DELETE", "/admin/users/\(id)/sessions")
            #expect(reply.status == 204)
            #expect(reply.body.isEmpty)
            await #expect(try fixture.me(first).status == 401)
            await #expect(try fixture.me(second).status == 401)
            await #expect(try fixture.me(bystander).status == 200)
            // The user stays, without sessions; ending none is still 204.
            #expect(try await fixture.send("GET", "/admin/users/\(id)").json?["sessions"] == .array([]))
            await #expect(try fixture.send("DELETE", "/admin/users/\(id)/sessions").status == 204)
            let unknown = try await fixture.send("DELETE", "/admin/users/usr_unknown/sessions")
            #expect(unknown.status == 404)
            #expect(unknown.error == "not_found")
        }
    }

    /// docs/guides/postgresql.md: sessions the admin API ends on one instance are refused by the others within a
    /// second, cached or not.
    @Test(.enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed"))
    func onPostgresAnotherInstanceRefusesTheEndedSessions() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        try await withFixture(PostgresInstancesTests.instance(url: url) { $0.adminToken = Self.token }) { a in
            try await withFixture(PostgresInstancesTests.instance(url: url, sharing: a.simulator)) { b in
                let session = try await PostgresInstancesTests.signIn(a, simulator: a.simulator, sub: Self.sub(60))
                #expect(try await PostgresInstancesTests.cached(on: b, session))
                let id = try #require(try await HTTPGet.run(port: a.application.port, path: "/api/me", headers: ["Authorization": "Bearer \(session)"])
                    .body.data(using: .utf8).flatMap { try JSONParser.parse(Array($0)).object?["id"]?.string })

                let ended = try await HTTPGet.raw(
                    port: a.application.port,
                    "DELETE /admin/users/\(id)/sessions HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(Self.token)\r\nContent-Length: 0\r\n\r\n")
                #expect(ended.hasPrefix("HTTP/1.1 204"))
                #expect(try await PostgresInstancesTests.refusedOnceTold(b, session), "ended on A, refused on B")
            }
        }
    }
}
