import AppleSimulator
import Foundation
import HTTPServer
import JSON
import Testing
import WireFormat
@testable import SiwaApp

/// docs/reference/http-api.md "Web flow" and §7 "Web", in process on both engines with a socket sample: the redirect to Apple, Apple's form_post
/// callback (built here as the simulator would post it), the pages and their forms. Every
/// failure of the callback leaves no user and no session.
@Suite struct WebFlowTests {
    static let web = "com.example.web"

    /// A raw HTTP exchange that keeps every `Set-Cookie`.
    struct Reply {
        let status: Int
        let headers: [(String, String)]
        let body: String

        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        var cookies: [String] { headers.filter { $0.0.lowercased() == "set-cookie" }.map(\.1) }
        func cookie(_ name: String) -> String? { cookies.first { $0.hasPrefix(name + "=") } }
        /// The value a `Set-Cookie` gives `name`.
        func cookieValue(_ name: String) -> String? {
            cookie(name).map { String($0.dropFirst(name.count + 1).prefix { $0 != ";" }) }
        }
    }

    final class Fixture: @unchecked Sendable, Stoppable {
        let harness: TestApp
        /// SQL on the application's own store (no second handle on its file).
        let database: StoreSQL
        var simulator: AppleIDSimulator { harness.simulator }
        var port: UInt16 { harness.application.port }
        var origin: String { harness.application.configuration.publicOrigin }
        var redirectURI: String { harness.application.configuration.redirectURI }

        init(
            engine: DatabaseEngine = .sqlite, transport: Transport = .inProcess, configure: (inout Configuration) -> Void = { _ in }
        ) async throws {
            harness = try await TestApp(engine: engine, transport: transport) {
                $0.clientIDs = [NativeSignInTests.app, WebFlowTests.web]
                $0.webClientID = WebFlowTests.web
                configure(&$0)
            }
            _ = try await harness.waitUntilReady()
            database = StoreSQL(harness.application.store)
        }

        func send(_ method: String, _ path: String, headers: [String: String] = [:], body: String = "") async throws -> Reply {
            let reply = try await harness.send(HTTPMethod(method), path, headers: headers.map { ($0.key, $0.value) }, body: body)
            return Reply(status: reply.status, headers: reply.fields.map { ($0.name, $0.value) }, body: reply.body)
        }

        /// `GET /auth/apple/login`: the redirect's query and the binding cookie.
        func login(returnTo: String? = nil) async throws -> (reply: Reply, query: [String: String], binding: String) {
            let path = "/auth/apple/login" + (returnTo.map { "?return_to=" + FormURLEncoding.escape($0) } ?? "")
            let reply = try await send("GET", path)
            let location = reply.header("Location") ?? ""
            let query = (try? FormFields(parsing: location.split(separator: "?", maxSplits: 1).last ?? "")).map {
                Dictionary($0.fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            } ?? [:]
            return (reply, query, reply.cookieValue(SessionCookies.bindingName) ?? "")
        }

        /// What Apple's consent page posts back after the person agrees.
        func applePost(state: String, nonce: String, sub: String = "000900.00000000000000000000000000000900.0900", user: String? = nil) throws -> String {
            let issued = try simulator.issueCode(sub: sub, clientID: WebFlowTests.web, nonce: nonce, email: "web@privaterelay.appleid.com", isPrivateEmail: true, redirectURI: redirectURI)
            var fields = [("state", state), ("code", issued.code), ("id_token", issued.identityToken)]
            if let user { fields.append(("user", user)) }
            return FormFields(fields: fields).encoded()
        }

        func callback(_ body: String, binding: String?) async throws -> Reply {
            var headers = ["Content-Type": "application/x-www-form-urlencoded", "Origin": "https://appleid.apple.com"]
            if let binding { headers["Cookie"] = "\(SessionCookies.bindingName)=\(binding)" }
            return try await send("POST", "/auth/apple/callback", headers: headers, body: body)
        }

        func count(_ table: String) throws -> Int {
            try database.read { try $0.queryOne("SELECT COUNT(*) FROM \(table)", [])?.int(0) ?? -1 }
        }

        func stop() async {
            database.close()
            await harness.stop()
        }
    }

    static func expectPageHeaders(_ reply: Reply, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.header("Content-Security-Policy") == Pages.contentSecurityPolicy, sourceLocation: sourceLocation)
        #expect(reply.header("X-Frame-Options") == "DENY", sourceLocation: sourceLocation)
        #expect(reply.header("Referrer-Policy") == "no-referrer", sourceLocation: sourceLocation)
        #expect(reply.header("X-Content-Type-Options") == "nosniff", sourceLocation: sourceLocation)
    }

    // MARK: - The happy path

    /// The socket sample.
    @Test(arguments: DatabaseEngine.available, Transport.allCases)
    func loginRedirectsToAppleAndTheCallbackSignsIn(_ engine: DatabaseEngine, _ transport: Transport) async throws {
        try await withFixture(Fixture(engine: engine, transport: transport)) { fixture in
            let (login, query, binding) = try await fixture.login(returnTo: "/account?tab=1")
            #expect(login.status == 302)
            #expect(login.header("Location")?.hasPrefix(fixture.simulator.baseURL + "/auth/authorize?") == true)
            #expect(login.header("Location")?.contains("response_type=code%20id_token") == true)
            #expect(query["response_mode"] == "form_post")
            #expect(query["scope"] == "name email")
            #expect(query["client_id"] == Self.web)
            #expect(query["redirect_uri"] == fixture.redirectURI)
            let state = try #require(query["state"])
            let nonce = try #require(query["nonce"])
            #expect(state.count >= 43 && nonce.count >= 43 && state != nonce)
            // The binding cookie must survive Apple's cross-site POST (APPLE.md pitfall 2).
            let bindingCookie = try #require(login.cookie(SessionCookies.bindingName))
            for attribute in ["HttpOnly", "Secure", "SameSite=None", "Path=/auth/apple"] { #expect(bindingCookie.contains(attribute)) }

            let user = #"{"name":{"firstName":"Grace","lastName":"<Hopper>"},"email":"web@privaterelay.appleid.com"}"#
            let reply = try await fixture.callback(try fixture.applePost(state: state, nonce: nonce, user: user), binding: binding)
            #expect(reply.status == 303, "\(reply.body)")
            #expect(reply.header("Location") == "/account?tab=1")
            let sessionCookie = try #require(reply.cookie(SessionCookies.sessionName))
            for attribute in ["HttpOnly", "Secure", "SameSite=Lax", "Path=/"] { #expect(sessionCookie.contains(attribute)) }
            #expect(reply.cookie(SessionCookies.bindingName)?.contains("Max-Age=0") == true)
            let exchange = try #require(fixture.simulator.calls.first { $0.endpoint == "token" })
            #expect(exchange.parameters["redirect_uri"] == fixture.redirectURI)
            #expect(exchange.parameters["client_id"] == Self.web)

            let session = try #require(reply.cookieValue(SessionCookies.sessionName))
            let account = try await fixture.send("GET", "/account", headers: ["Cookie": "\(SessionCookies.sessionName)=\(session)"])
            #expect(account.status == 200)
            Self.expectPageHeaders(account)
            #expect(account.body.contains("Hello, Grace &lt;Hopper&gt;"))
            #expect(!account.body.contains("<Hopper>"))
            #expect(account.body.contains("web@privaterelay.appleid.com"))
            #expect(account.body.contains("Hide My Email relay"))
            #expect(try fixture.count("web_sign_ins") == 0)
        }
    }

    // MARK: - Callback failures: each keeps nothing

    @Test(arguments: DatabaseEngine.available)
    func everyCallbackFailureIsAPageAndCreatesNothing(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            func attempt(_ name: String, expecting status: Int, _ make: () async throws -> Reply) async throws {
                let reply = try await make()
                #expect(reply.status == status, "\(name): \(reply.status) \(reply.body)")
                #expect(reply.header("Content-Type")?.hasPrefix("text/html") == true, "\(name)")
                #expect(reply.body.contains("id=\"error-message\""), "\(name)")
                #expect(reply.cookie(SessionCookies.sessionName) == nil, "\(name)")
                Self.expectPageHeaders(reply)
            }

            // Unknown state.
            try await attempt("unknown state", expecting: 400) {
                let (_, query, binding) = try await fixture.login()
                return try await fixture.callback(try fixture.applePost(state: "never-issued", nonce: query["nonce"] ?? ""), binding: binding)
            }
            // Missing and mismatched binding cookie; each also uses its state up.
            try await attempt("no binding cookie", expecting: 400) {
                let (_, query, _) = try await fixture.login()
                return try await fixture.callback(try fixture.applePost(state: query["state"] ?? "", nonce: query["nonce"] ?? ""), binding: nil)
            }
            try await attempt("another browser's cookie", expecting: 400) {
                let (_, query, _) = try await fixture.login()
                let (_, _, otherBinding) = try await fixture.login()
                return try await fixture.callback(try fixture.applePost(state: query["state"] ?? "", nonce: query["nonce"] ?? ""), binding: otherBinding)
            }
            // Expired state (its ten minutes are over).
            try await attempt("expired state", expecting: 400) {
                let (_, query, binding) = try await fixture.login()
                try fixture.database.writeAndWait { _ = try $0.run("UPDATE web_sign_ins SET expires_at = 0", []) }
                return try await fixture.callback(try fixture.applePost(state: query["state"] ?? "", nonce: query["nonce"] ?? ""), binding: binding)
            }
            // The id_token carries another nonce.
            try await attempt("nonce mismatch", expecting: 400) {
                let (_, query, binding) = try await fixture.login()
                return try await fixture.callback(try fixture.applePost(state: query["state"] ?? "", nonce: "someone-elses"), binding: binding)
            }
            #expect(fixture.simulator.calls.filter { $0.endpoint == "token" }.isEmpty, "nothing reaches Apple before every check passed")
            // Apple refuses the code, then Apple is down.
            try await attempt("Apple refuses the code", expecting: 401) {
                let (_, query, binding) = try await fixture.login()
                let body = try fixture.applePost(state: query["state"] ?? "", nonce: query["nonce"] ?? "")
                fixture.simulator.injectFault(SimulatorFault(endpoint: .token, status: 400, error: "invalid_grant"))
                return try await fixture.callback(body, binding: binding)
            }
            try await attempt("Apple unreachable", expecting: 502) {
                let (_, query, binding) = try await fixture.login()
                let body = try fixture.applePost(state: query["state"] ?? "", nonce: query["nonce"] ?? "")
                fixture.simulator.injectFault(SimulatorFault(endpoint: .token, status: 503))
                return try await fixture.callback(body, binding: binding)
            }
            // A body that is not Apple's form at all.
            try await attempt("no state", expecting: 400) { try await fixture.callback("code=x&id_token=y", binding: "z") }

            #expect(try fixture.count("users") == 0)
            #expect(try fixture.count("sessions") == 0)
            // Every callback above used its state up; left are the two sign-ins no callback named
            // (the one beside the unknown state, and the other browser's).
            #expect(try fixture.count("web_sign_ins") == 2)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aStateWorksOnce(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let (_, query, binding) = try await fixture.login()
            let body = try fixture.applePost(state: query["state"] ?? "", nonce: query["nonce"] ?? "")
            await #expect(try fixture.callback(body, binding: binding).status == 303)
            let again = try await fixture.callback(body, binding: binding)
            #expect(again.status == 400)
            #expect(again.cookie(SessionCookies.sessionName) == nil)
            #expect(try fixture.count("sessions") == 1)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func cancellingGoesBackToTheStartAndUsesTheStateUp(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let (_, query, binding) = try await fixture.login()
            let reply = try await fixture.callback(FormFields(fields: [("error", "user_cancelled_authorize"), ("state", query["state"] ?? "")]).encoded(), binding: binding)
            #expect(reply.status == 303)
            #expect(reply.header("Location") == "/?error=cancelled")
            #expect(try fixture.count("web_sign_ins") == 0)
            let home = try await fixture.send("GET", "/?error=cancelled")
            #expect(home.body.contains("You cancelled signing in with Apple."))
            #expect(try fixture.count("users") == 0)
        }
    }

    @Test(arguments: DatabaseEngine.available, ["//evil.example/", "https://evil.example/account", "/\\evil.example", "javascript:alert(1)", "/a\u{0}b", "http://localhost:8081/"])
    func aForeignReturnToIs400(_ engine: DatabaseEngine, _ returnTo: String) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let reply = try await fixture.send("GET", "/auth/apple/login?return_to=" + FormURLEncoding.escape(returnTo))
            #expect(reply.status == 400)
            #expect(reply.body.hasPrefix(#"{"error":"invalid_request""#))
            #expect(reply.cookie(SessionCookies.bindingName) == nil)
            #expect(try fixture.count("web_sign_ins") == 0)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func anAllowedOriginIsAValidReturnTo(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine) { $0.allowedReturnOrigins = ["https://app.example.com"] }) { fixture throws in
            await #expect(try fixture.send("GET", "/auth/apple/login?return_to=" + FormURLEncoding.escape("https://app.example.com/welcome")).status == 302)
            await #expect(try fixture.send("GET", "/auth/apple/login?return_to=" + FormURLEncoding.escape("https://app.example.com.evil/")).status == 400)
        }
    }

    // MARK: - Pages and forms

    @Test(arguments: DatabaseEngine.available)
    func theSignInPageHasTheButtonAndTheSecurityHeaders(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let page = try await fixture.send("GET", "/")
            #expect(page.status == 200)
            Self.expectPageHeaders(page)
            #expect(page.body.contains(#"id="sign-in-with-apple" class="siwa-button siwa-button--black siwa-button--medium" href="/auth/apple/login""#))
            // No inline script or style for the CSP to allow.
            #expect(!page.body.contains("<script>") && !page.body.contains("<style") && !page.body.contains("style="))
            #expect(page.body.contains(Pages.appleScriptURL(.en)))
            #expect(page.body.contains(#"data-client-id="com.example.web""#))
            let variant = try await fixture.send("GET", "/?style=white-outline&title=continue&size=large")
            #expect(variant.body.contains("siwa-button--white-outline siwa-button--large"))
            #expect(variant.body.contains("Continue with Apple"))
            await #expect(try fixture.send("GET", "/account").header("Location") == "/")
            let css = try await fixture.send("GET", "/static/siwa.css")
            #expect(css.header("Content-Type") == "text/css; charset=utf-8")
            #expect(css.body.contains(".siwa-button--white-outline"))
        }
    }

    /// Signs in through the web flow; returns the session cookie's value.
    static func signedIn(_ fixture: Fixture, sub: String = "000900.00000000000000000000000000000900.0900") async throws -> String {
        let (_, query, binding) = try await fixture.login()
        let reply = try await fixture.callback(try fixture.applePost(state: query["state"] ?? "", nonce: query["nonce"] ?? "", sub: sub), binding: binding)
        return try #require(reply.cookieValue(SessionCookies.sessionName))
    }

    static func csrf(in page: String) -> String? {
        guard let range = page.range(of: #"name="csrf" value=""#) else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
    }

    /// Our pages send `Referrer-Policy: no-referrer`, so browsers post their forms with
    /// `Origin: null`: that passes with the CSRF token; a foreign or missing origin does not.
    @Test(arguments: DatabaseEngine.available)
    func formsNeedTheCSRFTokenAndNoForeignOrigin(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let session = try await Self.signedIn(fixture)
            let cookie = "\(SessionCookies.sessionName)=\(session)"
            let page = try await fixture.send("GET", "/account", headers: ["Cookie": cookie])
            let token = try #require(Self.csrf(in: page.body))
            let form = ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"]

            var noToken = form
            noToken["Origin"] = fixture.origin
            await #expect(try fixture.send("POST", "/account/logout", headers: noToken, body: "csrf=wrong").status == 403)
            var otherOrigin = form
            otherOrigin["Origin"] = "https://evil.example"
            await #expect(try fixture.send("POST", "/account/logout", headers: otherOrigin, body: "csrf=\(token)").status == 403)
            await #expect(try fixture.send("POST", "/account/logout", headers: form, body: "csrf=\(token)").status == 403)
            var opaque = form
            opaque["Origin"] = "null"
            await #expect(try fixture.send("POST", "/account/logout", headers: opaque, body: "csrf=wrong").status == 403)
            #expect(try fixture.count("sessions") == 1)

            let logout = try await fixture.send("POST", "/account/logout", headers: opaque, body: "csrf=\(token)")
            #expect(logout.status == 303)
            #expect(logout.header("Location") == "/?signed_out=1")
            #expect(logout.cookie(SessionCookies.sessionName)?.contains("Max-Age=0") == true)
            #expect(try fixture.count("sessions") == 0)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func endingSessionsAndDeletingTheAccountFromThePage(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let first = try await Self.signedIn(fixture)
            let second = try await Self.signedIn(fixture)
            let third = try await Self.signedIn(fixture)
            #expect(try fixture.count("sessions") == 3)
            let cookie = "\(SessionCookies.sessionName)=\(first)"
            let page = try await fixture.send("GET", "/account", headers: ["Cookie": cookie])
            #expect(page.body.components(separatedBy: "data-session-id=").count == 4)
            let token = try #require(Self.csrf(in: page.body))
            let form = ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded", "Origin": fixture.origin]

            // End the second session by its id (taken from the page).
            let secondLive = try await fixture.send("GET", "/api/me", headers: ["Authorization": "Bearer \(second)"]).status
            try #require(secondLive == 200)
            let listed = try await fixture.send("GET", "/api/sessions", headers: ["Authorization": "Bearer \(second)"])
            let current = try JSONParser.parse(listed.body).object?["sessions"]?.array?.first { $0.object?["current"] == .bool(true) }
            let secondID = try #require(current?.object?["id"]?.string)
            let ended = try await fixture.send("POST", "/account/sessions/\(secondID)/end", headers: form, body: "csrf=\(token)")
            #expect(ended.header("Location") == "/account?ended=1")
            await #expect(try fixture.send("GET", "/api/me", headers: ["Authorization": "Bearer \(second)"]).status == 401)

            let others = try await fixture.send("POST", "/account/sessions/end-others", headers: form, body: "csrf=\(token)")
            #expect(others.header("Location") == "/account?ended=others")
            await #expect(try fixture.send("GET", "/api/me", headers: ["Authorization": "Bearer \(third)"]).status == 401)
            await #expect(try fixture.send("GET", "/api/me", headers: ["Authorization": "Bearer \(first)"]).status == 200)

            // Deleting needs the confirmation box.
            await #expect(try fixture.send("POST", "/account/delete", headers: form, body: "csrf=\(token)").status == 400)
            #expect(try fixture.count("users") == 1)
            let deleted = try await fixture.send("POST", "/account/delete", headers: form, body: "csrf=\(token)&confirm=yes")
            #expect(deleted.status == 303)
            #expect(deleted.header("Location") == "/?deleted=1")
            #expect(try fixture.count("users") == 0)
            await #expect(try fixture.send("GET", "/account", headers: ["Cookie": cookie]).header("Location") == "/")
        }
    }

    /// Sign in with Apple JS popup mode: the page forwards Apple's result to the JSON route,
    /// and a same-origin call gets the session cookie too.
    @Test(arguments: DatabaseEngine.available)
    func aSameOriginJSONSignInAlsoSetsTheCookie(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let issued = try fixture.simulator.issueCode(sub: "000901.0.0901", clientID: Self.web, nonce: "n", redirectURI: fixture.redirectURI)
            let body = JSONWriter.string(.object(JSONObject([
                ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string("n")),
            ])))
            let reply = try await fixture.send("POST", "/api/auth/apple", headers: ["Content-Type": "application/json", "Origin": fixture.origin], body: body)
            #expect(reply.status == 200, "\(reply.body)")
            #expect(reply.cookie(SessionCookies.sessionName)?.contains("SameSite=Lax") == true)
            let other = try fixture.simulator.issueCode(sub: "000901.0.0901", clientID: NativeSignInTests.app, nonce: "m")
            let native = JSONWriter.string(.object(JSONObject([("identity_token", .string(other.identityToken)), ("nonce", .string("m"))])))
            await #expect(try fixture.send("POST", "/api/auth/apple", headers: ["Content-Type": "application/json"], body: native).cookies.isEmpty)
        }
    }
}

@Suite struct SignInButtonTests {
    @Test(arguments: SignInButton.Style.allCases)
    func everyStyleHasItsClass(_ style: SignInButton.Style) {
        let button = SignInButton(query: ["style": style.rawValue])
        #expect(button.html(href: "/x").contains("siwa-button--\(style.rawValue)"))
        #expect(StaticAssets.stylesheet.contains(".siwa-button--\(style.rawValue) {"))
    }

    @Test func titlesAndTheLogoOnlyButton() {
        #expect(SignInButton(query: [:]).html(href: "/x").contains(">Sign in with Apple</span>"))
        #expect(SignInButton(query: ["title": "continue"]).html(href: "/x").contains(">Continue with Apple</span>"))
        let logo = SignInButton(query: ["title": "logo"]).html(href: "/x")
        #expect(logo.contains("siwa-button--logo"))
        #expect(!logo.contains("siwa-button__title"))
        #expect(logo.contains(#"aria-label="Sign in with Apple""#))
        #expect(logo.contains(#"viewBox="0 0 56 56""#))
    }

    @Test func sizesKeepTheGuidelinesMinimumsAndUnknownValuesFallBack() {
        #expect(SignInButton.Size.allCases.allSatisfy { $0.height >= 30 })
        #expect(StaticAssets.stylesheet.contains("min-width: 140px"))
        let button = SignInButton(query: ["style": "pink", "title": "<script>", "size": "huge"])
        #expect(button == SignInButton(query: [:]))
        #expect(button.html(href: "/a\"b").contains(#"href="/a&quot;b""#))
    }

    @Test func devicesAreNamedFromTheUserAgent() {
        #expect(DeviceName.describe(userAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15") == "Safari on macOS")
        #expect(DeviceName.describe(userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0 Safari/537.36") == "Chrome on Linux")
        #expect(DeviceName.describe(userAgent: nil) == "Web browser")
        #expect(DeviceName.describe(userAgent: "<img src=x>") == "Web browser")
    }
}
