import Foundation
import JSON
import SQLite
import Store
import Testing
@testable import SiwaApp

/// Sessions and account routes over real sockets (docs/reference/http-api.md), with sessions made in the database
/// as a sign-in would make them.
@Suite struct AccountRoutesTests {
    struct Reply {
        let status: Int
        let headers: String
        let body: String
        var json: JSONObject? { try? JSONParser.parse(body).object }
    }

    final class Fixture {
        let harness: ApplicationTests.Harness
        let database: Database

        init(configure: (inout Configuration) -> Void = { _ in }) async throws {
            harness = try ApplicationTests.Harness(configure: configure)
            database = try Database(path: harness.application.configuration.database, readers: 1)
        }

        /// A user with `count` live sessions; returns the user id and the session tokens.
        func user(sub: String, sessions count: Int = 1, givenName: String? = "Ada") async throws -> (id: String, tokens: [String]) {
            let now = Int64(Date().timeIntervalSince1970)
            return try await database.write { connection in
                let (user, _) = try UserStore.upsertOnSignIn(
                    in: connection,
                    identity: VerifiedIdentity(appleSub: sub, email: "x@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true),
                    profile: ClientProfile(givenName: givenName, familyName: nil), now: now)
                var tokens: [String] = []
                for index in 0..<count {
                    tokens.append(try SessionStore.create(in: connection, userID: user.id, deviceName: "device \(index)", now: now, ttl: 3600).token)
                }
                return (user.id, tokens)
            }
        }

        func send(_ method: String, _ path: String, token: String? = nil, cookie: String? = nil, origin: String? = nil) async throws -> Reply {
            var request = "\(method) \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 0\r\n"
            if let token { request += "Authorization: Bearer \(token)\r\n" }
            if let cookie { request += "Cookie: theme=dark; siwa_session=\(cookie)\r\n" }
            if let origin { request += "Origin: \(origin)\r\n" }
            let text = try await HTTPGet.raw(port: harness.application.port, request + "\r\n")
            let parts = text.components(separatedBy: "\r\n\r\n")
            let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
            return Reply(status: status, headers: parts.first ?? "", body: parts.dropFirst().joined(separator: "\r\n\r\n"))
        }

        func stop() async {
            database.close()
            await harness.stop()
        }
    }

    @Test func meReturnsTheUserObject() async throws {
        let fixture = try await Fixture()
        let (id, tokens) = try await fixture.user(sub: "000200.00000000000000000000000000000200.0200")
        let reply = try await fixture.send("GET", "/api/me", token: tokens[0])
        #expect(reply.status == 200)
        let user = try #require(reply.json)
        #expect(user.keys == ["id", "apple_sub", "email", "email_verified", "is_private_email", "email_forwarding",
                              "real_user_status", "name", "apple_credential", "external_id", "sign_in_methods", "locale", "created_at", "updated_at"])
        #expect(user["external_id"] == .null)
        #expect(user["locale"] == .string("en"))
        #expect(user["sign_in_methods"] == .array([.string("apple")]))
        #expect(user["id"]?.string == id)
        #expect(user["email_verified"] == .bool(true) && user["is_private_email"] == .bool(true))
        #expect(user["email_forwarding"]?.string == "enabled")  // a private relay address forwards
        #expect(user["real_user_status"]?.string == "unsupported")
        #expect(user["name"]?.object?["given"]?.string == "Ada")
        #expect(user["name"]?.object?["family"] == .null)
        #expect(user["apple_credential"]?.string == "authorized")
        #expect(user["created_at"]?.string?.hasSuffix("Z") == true)
        await fixture.stop()
    }

    @Test func withoutALiveSessionEverythingIs401() async throws {
        let fixture = try await Fixture()
        for (method, path) in [("GET", "/api/me"), ("POST", "/api/logout"), ("GET", "/api/sessions"), ("DELETE", "/api/sessions/ses_x")] {
            await #expect(try fixture.send(method, path).status == 401)
            let reply = try await fixture.send(method, path, token: "not-a-session")
            #expect(reply.status == 401)
            #expect(reply.body.hasPrefix(#"{"error":"unauthenticated""#))
        }
        await fixture.stop()
    }

    @Test func logoutEndsOnlyThatSession() async throws {
        let fixture = try await Fixture()
        let (_, tokens) = try await fixture.user(sub: "000201.00000000000000000000000000000201.0201", sessions: 2)
        await #expect(try fixture.send("POST", "/api/logout", token: tokens[0]).status == 204)
        await #expect(try fixture.send("GET", "/api/me", token: tokens[0]).status == 401)
        await #expect(try fixture.send("GET", "/api/me", token: tokens[1]).status == 200)
        await fixture.stop()
    }

    @Test func sessionsAreListedAndEndedButNeverAnotherUsers() async throws {
        let fixture = try await Fixture()
        let (_, ada) = try await fixture.user(sub: "000202.00000000000000000000000000000202.0202", sessions: 2)
        let (_, bob) = try await fixture.user(sub: "000203.00000000000000000000000000000203.0203", sessions: 1, givenName: "Bob")
        let listed = try await #require(try fixture.send("GET", "/api/sessions", token: ada[0]).json?["sessions"]?.array)
        #expect(listed.count == 2)
        #expect(listed.filter { $0.object?["current"] == .bool(true) }.count == 1)
        let other = try #require(listed.first { $0.object?["current"] == .bool(false) }?.object?["id"]?.string)
        let bobsID = try await #require(try fixture.send("GET", "/api/sessions", token: bob[0]).json?["sessions"]?.array?.first?.object?["id"]?.string)

        // Ada cannot end Bob's session: 404, and Bob stays signed in.
        await #expect(try fixture.send("DELETE", "/api/sessions/\(bobsID)", token: ada[0]).status == 404)
        await #expect(try fixture.send("GET", "/api/me", token: bob[0]).status == 200)
        // Her own other session ends, once.
        await #expect(try fixture.send("DELETE", "/api/sessions/\(other)", token: ada[0]).status == 204)
        await #expect(try fixture.send("DELETE", "/api/sessions/\(other)", token: ada[0]).status == 404)
        await #expect(try fixture.send("GET", "/api/me", token: ada[1]).status == 401)
        await fixture.stop()
    }

    @Test func cookieSessionsNeedOurOriginToChangeState() async throws {
        let fixture = try await Fixture()
        let (_, tokens) = try await fixture.user(sub: "000204.00000000000000000000000000000204.0204")
        await #expect(try fixture.send("GET", "/api/me", cookie: tokens[0]).status == 200)
        let foreign = try await fixture.send("POST", "/api/logout", cookie: tokens[0], origin: "https://evil.example")
        #expect(foreign.status == 403)
        #expect(foreign.body.hasPrefix(#"{"error":"forbidden""#))
        await #expect(try fixture.send("POST", "/api/logout", cookie: tokens[0]).status == 403)
        await #expect(try fixture.send("GET", "/api/me", cookie: tokens[0]).status == 200)
        let origin = fixture.harness.application.configuration.publicOrigin
        await #expect(try fixture.send("POST", "/api/logout", cookie: tokens[0], origin: origin).status == 204)
        await #expect(try fixture.send("GET", "/api/me", cookie: tokens[0]).status == 401)
        await fixture.stop()
    }

    @Test func noncesAreIssuedForTenMinutes() async throws {
        let fixture = try await Fixture()
        let reply = try await fixture.send("POST", "/api/auth/apple/nonce")
        #expect(reply.status == 201)
        let nonce = try #require(reply.json?["nonce"]?.string)
        #expect(nonce.utf8.count >= 22)
        #expect(reply.json?["expires_at"]?.string?.hasSuffix("Z") == true)
        await #expect(try fixture.send("POST", "/api/auth/apple/nonce").json?["nonce"]?.string != nonce)
        await fixture.stop()
    }
}
