import AppleSimulator
import Foundation
import HTTPServer
import JSON
import Testing
import TestSupport
import WireFormat
@testable import SiwaApp

/// docs/reference/http-api.md "No NUL" over real sockets on both engines: a U+0000 in any string a client sends
/// (a JSON member escaped or raw, a form field, a query) is 400 `invalid_request` (a 400 page
/// on a page route), with nothing changed in the database, and for a sign-in, before its code
/// goes to Apple. Each request would succeed without the U+0000: a valid token with its code,
/// the right password, a live session.
@Suite(.timeLimit(.minutes(3)))
struct NULRefusalTests {
    typealias Engine = DatabaseEngine
    typealias Fixture = DatabaseOutageTests.Fixture

    static let nul = "a\u{0}b"
    static let app = DatabaseOutageTests.app

    /// `fields` with the member at `path` (a key, or a dotted path such as `user.name.firstName`)
    /// set to `value`, the objects on the way made when missing.
    static func replacing(_ fields: [(String, JSONValue)], _ path: String, with value: String) -> [(String, JSONValue)] {
        func set(_ object: JSONObject, _ keys: ArraySlice<Substring>) -> JSONObject {
            var object = object
            let key = String(keys.first ?? "")
            object[key] = keys.count == 1 ? .string(value) : .object(set(object[key]?.object ?? JSONObject(), keys.dropFirst()))
            return object
        }
        return set(JSONObject(fields), path.split(separator: ".")[...]).members.map { ($0.key, $0.value) }
    }

    @Test(arguments: Engine.available)
    func aNULInAnyClientStringIs400AndChangesNothing(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let password = "correct horse battery"
            let (session, userID) = try await fixture.signIn(sub: DatabaseOutageTests.sub(20))
            let made = try await fixture.post("/api/auth/password/sign-up", [("email", .string("ada@example.com")), ("password", .string(password))])
            let passwordSession = try #require(made.json?["session"]?.object?["token"]?.string, "\(made.body)")
            let notification = try fixture.simulator.notificationPayload(
                NotificationEvent(type: "email-disabled", sub: DatabaseOutageTests.sub(20), clientID: Self.app))
            // A web sign-in on its way: Apple's answer is posted below.
            let login = try await fixture.send("GET", "/auth/apple/login")
            let location = login.head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("location:") } ?? ""
            let query = try FormFields(parsing: location.split(separator: "?", maxSplits: 1).last ?? "")
            let state = try #require(query["state"]), nonce = try #require(query["nonce"])
            let binding = try #require(login.head.components(separatedBy: "\r\n").compactMap { line -> String? in
                guard line.lowercased().hasPrefix("set-cookie: \(SessionCookies.bindingName)=") else { return nil }
                return String(line.dropFirst("set-cookie: \(SessionCookies.bindingName)=".count).prefix { $0 != ";" })
            }.first)
            let issued = try fixture.simulator.issueCode(
                sub: DatabaseOutageTests.sub(24), clientID: DatabaseOutageTests.web, nonce: nonce, redirectURI: fixture.harness.application.configuration.redirectURI)
            let before = try await fixture.counts()
            let tokenCalls = fixture.tokenCalls

            func expectRefused(_ reply: DatabaseOutageTests.Reply, page: Bool = false, _ label: String) {
                #expect(reply.status == 400, "\(label): \(reply.body)")
                if page {
                    #expect(reply.isPage, "\(label)")
                } else {
                    #expect(reply.error == "invalid_request", "\(label): \(reply.body)")
                }
            }

            // JSON bodies: each string member in turn, of a request that is otherwise good.
            let signIn = { try fixture.signInBody(sub: DatabaseOutageTests.sub(21), withCode: true) + [("device_name", .string("iPhone"))] }
            let jsonCases: [(path: String, method: String, bearer: String?, fields: () throws -> [(String, JSONValue)], members: [String])] = [
                ("/api/auth/apple", "POST", nil, signIn,
                 ["identity_token", "authorization_code", "nonce", "device_name", "user.email", "user.name.firstName", "user.name.lastName"]),
                ("/api/auth/password/sign-up", "POST", nil,
                 { [("email", .string("bo@example.com")), ("password", .string(password)), ("device_name", .string("Mac"))] },
                 ["email", "password", "device_name", "name.given"]),
                ("/api/auth/password", "POST", nil,
                 { [("email", .string("ada@example.com")), ("password", .string(password)), ("device_name", .string("Mac"))] },
                 ["email", "password", "device_name"]),
                ("/api/auth/password/reset-request", "POST", nil, { [("email", .string("ada@example.com"))] }, ["email"]),
                ("/api/auth/password/reset", "POST", nil, { [("code", .string("c")), ("new_password", .string("another horse battery"))] },
                 ["code", "new_password"]),
                ("/api/auth/apple/upgrade", "POST", nil,
                 { try fixture.signInBody(sub: DatabaseOutageTests.sub(22), withCode: true) + [("email", .string("ada@example.com")), ("password", .string(password))] },
                 ["email", "password", "identity_token"]),
                ("/api/account/password", "PUT", passwordSession,
                 { [("current_password", .string(password)), ("new_password", .string("another horse battery"))] },
                 ["current_password", "new_password"]),
                ("/api/account/apple", "POST", passwordSession, { try fixture.signInBody(sub: DatabaseOutageTests.sub(23), withCode: true) },
                 ["identity_token", "nonce", "authorization_code"]),
                ("/api/auth/exchange", "POST", nil, { [("code", .string("c")), ("code_verifier", .string("v")), ("device_name", .string("iPad"))] },
                 ["code", "code_verifier", "device_name"]),
                ("/admin/users/\(userID)", "PATCH", DatabaseOutageTests.adminToken, { [("external_id", .string("crm-1"))] }, ["external_id"]),
                ("/apple/notifications", "POST", nil, { [("payload", .string(notification))] }, ["payload"]),
            ]
            for entry in jsonCases {
                for member in entry.members {
                    let body = JSONWriter.string(.object(JSONObject(Self.replacing(try entry.fields(), member, with: Self.nul))))
                    #expect(body.contains(#"\u0000"#))
                    let reply = try await fixture.send(entry.method, entry.path, bearer: entry.bearer, body: body)
                    expectRefused(reply, "\(entry.path) \(member)")
                }
            }
            // The raw byte, unescaped, in a JSON string.
            let raw = JSONWriter.string(.object(JSONObject(try signIn()))).replacingOccurrences(of: "iPhone", with: "iP\u{0}hone")
            expectRefused(try await fixture.send("POST", "/api/auth/apple", body: raw), "raw NUL in device_name")

            // Form fields: Apple's callback (the state, the token, the `user` JSON inside its
            // field), the sign-in page's forms and the account page's; escaped and raw.
            let form = "application/x-www-form-urlencoded"
            let origin = fixture.harness.application.configuration.publicOrigin
            func callback(_ fields: [(String, String)]) -> String { FormFields(fields: fields.map { (name: $0.0, value: $0.1) }).encoded() }
            let good = [("state", state), ("code", issued.code), ("id_token", issued.identityToken)]
            let callbackBodies: [(String, String)] = [
                ("state", callback([("state", Self.nul), ("code", issued.code), ("id_token", issued.identityToken)])),
                ("id_token", callback([("state", state), ("code", issued.code), ("id_token", issued.identityToken + Self.nul)])),
                ("code", callback([("state", state), ("code", Self.nul), ("id_token", issued.identityToken)])),
                ("user JSON", callback(good + [("user", #"{"name":{"firstName":"A\u0000B"},"email":"a@example.com"}"#)])),
                ("raw byte", "state=\(state)&code=\(issued.code)&id_token=\(issued.identityToken)&x=a\u{0}b"),
            ]
            for (label, body) in callbackBodies {
                let reply = try await fixture.send(
                    "POST", "/auth/apple/callback", headers: [("Cookie", "\(SessionCookies.bindingName)=\(binding)")], body: body, contentType: form)
                expectRefused(reply, page: true, "callback \(label)")
            }
            for (path, body, cookie) in [
                ("/auth/password/sign-in", "email=ada%40example.com&password=a%00b&csrf=x", nil),
                ("/auth/password/sign-up", "email=b%00o%40example.com&password=correct+horse+battery&csrf=x", nil),
                ("/auth/password/reset-request", "email=ada%40example.com%00&csrf=x", nil),
                ("/account/password", "new_password=a%00b&csrf=x", "siwa_session=\(session)"),
                ("/account/logout", "csrf=x%00", "siwa_session=\(session)"),
            ] as [(String, String, String?)] {
                var headers = [("Origin", origin)]
                if let cookie { headers.append(("Cookie", cookie)) }
                expectRefused(try await fixture.send("POST", path, headers: headers, body: body, contentType: form), page: true, path)
            }

            // Queries.
            expectRefused(try await fixture.send("GET", "/auth/apple/login?return_to=%2Faccount%00"), "login return_to")
            expectRefused(try await fixture.send("GET", "/admin/users?email=ada%00%40example.com", bearer: DatabaseOutageTests.adminToken), "admin email")

            // A path names a resource; one with a U+0000 names none.
            #expect(try await fixture.send("DELETE", "/api/sessions/ses%00x", bearer: session).status == 404)
            #expect(try await fixture.send("GET", "/admin/users/usr%00x", bearer: DatabaseOutageTests.adminToken).status == 404)

            #expect(try await fixture.counts() == before, "nothing changed")
            #expect(fixture.tokenCalls == tokenCalls, "no code went to Apple")
            // Without the U+0000 the same requests work.
            let signedIn = try await fixture.post("/api/auth/apple", try signIn())
            #expect(signedIn.status == 200, "\(signedIn.body)")
            let web = try await fixture.send(
                "POST", "/auth/apple/callback", headers: [("Cookie", "\(SessionCookies.bindingName)=\(binding)")], body: callback(good), contentType: form)
            #expect(web.status == 303, "\(web.body)")
        }
    }
}
