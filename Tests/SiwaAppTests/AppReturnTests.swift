import Foundation
import HTTPServer
import JSON
import OpenSSLCrypto
import Testing
import WireFormat
@testable import SiwaApp

/// Returning a web sign-in to an app (docs/guides/connecting-your-backend.md, RFC 7636, RFC 8252): the PKCE challenge at login,
/// the one-time code on the app URL instead of a cookie, and `POST /api/auth/exchange`.
@Suite struct AppReturnTests {
    typealias Fixture = WebFlowTests.Fixture
    static let appURL = "com.example.app:/signed-in?from=web"

    static func pkce() -> (verifier: String, challenge: String) {
        let verifier = Base64.url.encode(SecureRandom.bytes(48))
        return (verifier, Base64.url.encode(SHA256.hash(Array(verifier.utf8))))
    }

    static func fixture(_ engine: DatabaseEngine) async throws -> Fixture {
        try await Fixture(engine: engine) { $0.allowedReturnSchemes = ["com.example.app"] }
    }

    /// Login with `query` (already encoded), Apple's consent, and the callback's answer.
    static func signIn(_ fixture: Fixture, query: String, sub: String) async throws -> WebFlowTests.Reply {
        let login = try await fixture.send("GET", "/auth/apple/login?" + query)
        #expect(login.status == 302, "\(login.body)")
        let location = login.header("Location") ?? ""
        let fields = try FormFields(parsing: location.split(separator: "?", maxSplits: 1).last ?? "")
        let body = try fixture.applePost(state: fields["state"] ?? "", nonce: fields["nonce"] ?? "", sub: sub)
        return try await fixture.callback(body, binding: login.cookieValue(SessionCookies.bindingName))
    }

    static func query(returnTo: String, challenge: String?, method: String? = "S256") -> String {
        var fields = [("return_to", returnTo)]
        if let challenge { fields.append(("code_challenge", challenge)) }
        if let method { fields.append(("code_challenge_method", method)) }
        return FormFields(fields: fields).encoded()
    }

    static func exchange(_ fixture: Fixture, _ fields: [(String, JSONValue)]) async throws -> (status: Int, json: JSONObject?) {
        let reply = try await fixture.send(
            "POST", "/api/auth/exchange", headers: ["Content-Type": "application/json"], body: JSONWriter.string(.object(JSONObject(fields))))
        return (reply.status, try? JSONParser.parse(reply.body).object)
    }

    /// The code the callback put on the app URL.
    static func code(in location: String) throws -> String {
        let query = try #require(location.split(separator: "?", maxSplits: 1).last)
        return try #require(try FormFields(parsing: query)["code"])
    }

    @Test(arguments: DatabaseEngine.available)
    func theCallbackReturnsToTheAppWithACodeThatTheVerifierTurnsIntoASessionOnce(_ engine: DatabaseEngine) async throws {
        try await withFixture(Self.fixture(engine)) { fixture in
            let (verifier, challenge) = Self.pkce()
            let callback = try await Self.signIn(fixture, query: Self.query(returnTo: Self.appURL, challenge: challenge), sub: "000910.app.return")
            #expect(callback.status == 303)
            let location = try #require(callback.header("Location"))
            #expect(location.hasPrefix(Self.appURL + "&code="), "the app's own query is kept")
            #expect(callback.cookie(SessionCookies.sessionName) == nil, "no cookie: the app makes its session")
            #expect(try fixture.count("users") == 1 && fixture.count("sessions") == 0)
            let code = try Self.code(in: location)
            #expect(code.count == 43, "256 bits")

            let exchanged = try await Self.exchange(fixture, [("code", .string(code)), ("code_verifier", .string(verifier)), ("device_name", .string("Pixel 9"))])
            #expect(exchanged.status == 200)
            #expect(exchanged.json?["created"] == .bool(true))
            let token = try #require(exchanged.json?["session"]?.object?["token"]?.string)
            #expect(try await fixture.send("GET", "/api/me", headers: ["Authorization": "Bearer \(token)"]).status == 200)
            #expect(try fixture.database.read { try $0.queryOne("SELECT device_name FROM sessions")?.string(0) } == "Pixel 9")

            // The same code again: used.
            let again = try await Self.exchange(fixture, [("code", .string(code)), ("code_verifier", .string(verifier))])
            #expect(again.status == 400 && again.json?["error"]?.string == "invalid_grant")
            #expect(try fixture.count("sessions") == 1)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aWrongVerifierIsRefusedAndUsesTheCodeUp(_ engine: DatabaseEngine) async throws {
        try await withFixture(Self.fixture(engine)) { fixture in
            let (verifier, challenge) = Self.pkce()
            let callback = try await Self.signIn(fixture, query: Self.query(returnTo: Self.appURL, challenge: challenge), sub: "000911.app.return")
            let code = try Self.code(in: try #require(callback.header("Location")))
            // A stolen code alone (another app registered the scheme) is worthless.
            let wrong = try await Self.exchange(fixture, [("code", .string(code)), ("code_verifier", .string(Self.pkce().verifier))])
            #expect(wrong.status == 400 && wrong.json?["error"]?.string == "invalid_grant")
            let right = try await Self.exchange(fixture, [("code", .string(code)), ("code_verifier", .string(verifier))])
            #expect(right.status == 400 && right.json?["error"]?.string == "invalid_grant", "the failed attempt used the code up")
            #expect(try fixture.count("sessions") == 0)
        }
    }

    @Test(arguments: [
        ("missing verifier", [("code", JSONValue.string("c"))], "invalid_request"),
        ("verifier not a string", [("code", .string("c")), ("code_verifier", .integer(1))], "invalid_request"),
        ("missing code", [("code_verifier", .string(String(repeating: "a", count: 43)))], "invalid_request"),
        ("unknown code", [("code", .string("nope")), ("code_verifier", .string(String(repeating: "a", count: 43)))], "invalid_grant"),
        ("short verifier", [("code", .string("nope")), ("code_verifier", .string("abc"))], "invalid_grant"),
    ])
    func badExchangesAre400(_ name: String, _ fields: [(String, JSONValue)], _ error: String) async throws {
        // Malformed or unknown: on one engine (the exchange itself runs on both above).
        try await withFixture(Self.fixture(.sqlite)) { fixture in
            let reply = try await Self.exchange(fixture, fields)
            #expect(reply.status == 400, "\(name)")
            #expect(reply.json?["error"]?.string == error, "\(name)")
            let notJSON = try await fixture.send("POST", "/api/auth/exchange", headers: ["Content-Type": "application/json"], body: "code=1")
            #expect(notJSON.status == 400)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func loginRefusesAnAppReturnWithoutItsChallengeAndAChallengeWithoutAnAppReturn(_ engine: DatabaseEngine) async throws {
        try await withFixture(Self.fixture(engine)) { fixture in
            let challenge = Self.pkce().challenge
            let refused = [
                Self.query(returnTo: Self.appURL, challenge: nil, method: nil),
                Self.query(returnTo: Self.appURL, challenge: challenge, method: nil),
                Self.query(returnTo: Self.appURL, challenge: challenge, method: "plain"),
                Self.query(returnTo: Self.appURL, challenge: "too-short"),
                Self.query(returnTo: "evil.app:/steal", challenge: challenge),
                Self.query(returnTo: "javascript:alert(1)", challenge: challenge),
                Self.query(returnTo: "/account", challenge: challenge),
            ]
            for query in refused {
                let reply = try await fixture.send("GET", "/auth/apple/login?" + query)
                #expect(reply.status == 400, "\(query)")
            }
            #expect(try fixture.count("web_sign_ins") == 0, "a refused login stores nothing")
            // The scheme is matched case-insensitively, as URL schemes are.
            #expect(try await fixture.send("GET", "/auth/apple/login?" + Self.query(returnTo: "COM.Example.App:/x", challenge: challenge)).status == 302)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func withoutAllowedSchemesAnAppURLIsNotAReturn(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let reply = try await fixture.send("GET", "/auth/apple/login?" + Self.query(returnTo: Self.appURL, challenge: Self.pkce().challenge))
            #expect(reply.status == 400)
        }
    }

    @Test func theCodeGoesOnTheAppURLBeforeAnyFragment() {
        #expect(AppReturn.url("com.example.app:/cb", adding: "C") == "com.example.app:/cb?code=C")
        #expect(AppReturn.url("com.example.app:/cb?a=1", adding: "C") == "com.example.app:/cb?a=1&code=C")
        #expect(AppReturn.url("com.example.app:/cb?", adding: "C") == "com.example.app:/cb?code=C")
        #expect(AppReturn.url("com.example.app:/cb#top", adding: "C") == "com.example.app:/cb?code=C#top")
        // RFC 7636 appendix B's example pair.
        #expect(AppReturn.verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", matches: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"))
        #expect(!AppReturn.verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXj", matches: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"))
    }
}
