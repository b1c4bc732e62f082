import AppleSimulator
import Foundation
import HTTPServer
import JSON
import Testing
import TestSupport
import WireFormat
@testable import SiwaApp

/// docs/guides/passwords-and-email.md "Pages", in process on both engines: the sign-in page's email and password forms (bound to
/// the browser's `siwa_form` cookie), the account page's sign-in methods, and "Add Sign in with
/// Apple", whose callback is Apple's cross-site POST carrying no session cookie.
@Suite(.timeLimit(.minutes(2)))
struct PasswordPagesTests {
    typealias Fixture = WebFlowTests.Fixture

    /// The sign-in page's form cookie and token.
    static func formToken(_ fixture: Fixture) async throws -> (cookie: String, token: String) {
        let home = try await fixture.send("GET", "/")
        #expect(home.status == 200)
        WebFlowTests.expectPageHeaders(home)
        let cookie = try #require(home.cookieValue(SessionCookies.formName))
        #expect(home.cookie(SessionCookies.formName)?.contains("HttpOnly; Secure; SameSite=Lax") == true)
        return (cookie, try #require(csrf(in: home.body)))
    }

    static func csrf(in page: String) -> String? {
        guard let range = page.range(of: #"name="csrf" value=""#) else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
    }

    static func post(_ fixture: Fixture, _ path: String, _ fields: [(String, String)], cookies: [String], origin: String? = nil) async throws
        -> WebFlowTests.Reply
    {
        try await fixture.send("POST", path, headers: [
            "Content-Type": "application/x-www-form-urlencoded", "Origin": origin ?? fixture.origin, "Cookie": cookies.joined(separator: "; "),
        ], body: FormFields(fields: fields).encoded())
    }

    @Test(arguments: DatabaseEngine.available)
    func createAnAccountSignOutAndSignInWithThePassword(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let (cookie, token) = try await Self.formToken(fixture)
            let form = "\(SessionCookies.formName)=\(cookie)"
            let home = try await fixture.send("GET", "/", headers: ["Cookie": form])
            // The page keeps the browser's cookie and shows the forms beside the Apple button.
            #expect(home.cookie(SessionCookies.formName) == nil)
            #expect(home.body.contains(#"action="/auth/password/sign-in""#) && home.body.contains(#"action="/auth/password/sign-up""#))
            #expect(!home.body.contains("<script>"))

            let fields = [("csrf", token), ("email", "ada@example.com"), ("password", "correct horse battery"), ("given_name", "Ada")]
            // Without the cookie, or from another site, nothing is created.
            #expect(try await Self.post(fixture, "/auth/password/sign-up", fields, cookies: []).status == 403)
            #expect(try await Self.post(fixture, "/auth/password/sign-up", fields, cookies: [form], origin: "https://evil.example").status == 403)
            #expect(try await Self.post(fixture, "/auth/password/sign-up", [("csrf", "forged")] + fields.dropFirst(), cookies: [form]).status == 403)
            #expect(try fixture.count("users") == 0)

            let made = try await Self.post(fixture, "/auth/password/sign-up", fields, cookies: [form])
            #expect(made.status == 303 && made.header("Location") == "/account?welcome=1")
            let session = try #require(made.cookieValue(SessionCookies.sessionName))
            let account = try await fixture.send("GET", "/account", headers: ["Cookie": "siwa_session=\(session)"])
            #expect(account.body.contains("Hello, Ada"))
            #expect(account.body.contains(#"id="add-apple""#) && account.body.contains(#"id="change-password-form""#))

            // A second account with that email goes back to the page with the reason.
            let again = try await Self.post(fixture, "/auth/password/sign-up", fields, cookies: [form])
            #expect(again.header("Location") == "/?error=account_exists")
            #expect(try await fixture.send("GET", "/?error=account_exists").body.contains("An account already uses this email"))

            let wrong = try await Self.post(fixture, "/auth/password/sign-in", [("csrf", token), ("email", "ada@example.com"), ("password", "wrong horse battery")], cookies: [form])
            #expect(wrong.status == 303 && wrong.header("Location") == "/?error=invalid_credentials")
            let signedIn = try await Self.post(fixture, "/auth/password/sign-in", [("csrf", token), ("email", "ADA@example.com"), ("password", "correct horse battery")], cookies: [form])
            #expect(signedIn.status == 303 && signedIn.header("Location") == "/account")
            #expect(signedIn.cookieValue(SessionCookies.sessionName) != nil)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func addSignInWithAppleLinksOnTheCrossSiteCallback(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let (cookie, token) = try await Self.formToken(fixture)
            let made = try await Self.post(
                fixture, "/auth/password/sign-up", [("csrf", token), ("email", "ada@example.com"), ("password", "correct horse battery")],
                cookies: ["\(SessionCookies.formName)=\(cookie)"])
            let session = "siwa_session=" + (made.cookieValue(SessionCookies.sessionName) ?? "")
            // Only a proven email may carry an Apple ID (docs/guides/passwords-and-email.md), as its verification code would.
            try await fixture.database.write { _ = try $0.run("UPDATE password_credentials SET email_verified = 1") }
            let account = try await fixture.send("GET", "/account", headers: ["Cookie": session])
            let accountToken = try #require(Self.csrf(in: account.body))

            // A link with the page's token (a form's redirect to Apple would break the CSP's form-action).
            #expect(account.body.contains(#"href="/auth/apple/link?csrf="#))
            #expect(try await fixture.send("GET", "/auth/apple/link?csrf=forged", headers: ["Cookie": session]).status == 403)
            let start = try await fixture.send("GET", "/auth/apple/link?csrf=\(FormURLEncoding.escape(accountToken))", headers: ["Cookie": session])
            #expect(start.status == 302)
            let location = try #require(start.header("Location"))
            #expect(location.hasPrefix(fixture.simulator.baseURL + "/auth/authorize?"))
            let query = Dictionary(try FormFields(parsing: location.split(separator: "?", maxSplits: 1).last ?? "").fields.map { ($0.name, $0.value) }) { a, _ in a }
            let binding = try #require(start.cookieValue(SessionCookies.bindingName))

            // Apple's form_post: a cross-site POST with the binding cookie (SameSite=None) and no session cookie.
            let sub = "000901.00000000000000000000000000000901.0901"
            let callback = try await fixture.callback(
                try fixture.applePost(state: try #require(query["state"]), nonce: try #require(query["nonce"]), sub: sub), binding: binding)
            #expect(callback.status == 303, "\(callback.body)")
            #expect(callback.header("Location") == "/account?linked=1")
            #expect(callback.cookieValue(SessionCookies.sessionName) == nil, "a link makes no new session")
            let linked = try await fixture.send("GET", "/account?linked=1", headers: ["Cookie": session])
            #expect(linked.body.contains("Sign in with Apple was added"))
            #expect(linked.body.contains(#"id="remove-apple""#) && linked.body.contains(#"id="remove-password""#))
            #expect(try fixture.database.read { try $0.queryOne("SELECT COUNT(*) FROM users WHERE apple_sub = ?", [.text(sub)])?.int(0) } == 1)
            #expect(try fixture.count("users") == 1)

            // Removing the password leaves Apple as the only method, which cannot be removed.
            let removed = try await Self.post(fixture, "/account/password/remove", [("csrf", accountToken)], cookies: [session])
            #expect(removed.header("Location") == "/account?password=removed")
            let refused = try await Self.post(fixture, "/account/apple/remove", [("csrf", accountToken)], cookies: [session])
            #expect(refused.header("Location") == "/account?error=last_sign_in_method")
            let page = try await fixture.send("GET", "/account?error=last_sign_in_method", headers: ["Cookie": session])
            #expect(page.body.contains("This is your only way to sign in"))
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aLinkStartedByASessionThatEndedLinksNothing(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let (cookie, token) = try await Self.formToken(fixture)
            let made = try await Self.post(
                fixture, "/auth/password/sign-up", [("csrf", token), ("email", "bob@example.com"), ("password", "correct horse battery")],
                cookies: ["\(SessionCookies.formName)=\(cookie)"])
            let session = "siwa_session=" + (made.cookieValue(SessionCookies.sessionName) ?? "")
            try await fixture.database.write { _ = try $0.run("UPDATE password_credentials SET email_verified = 1") }
            let accountToken = try #require(Self.csrf(in: try await fixture.send("GET", "/account", headers: ["Cookie": session]).body))
            let start = try await fixture.send("GET", "/auth/apple/link?csrf=\(FormURLEncoding.escape(accountToken))", headers: ["Cookie": session])
            let location = try #require(start.header("Location"))
            let query = Dictionary(try FormFields(parsing: location.split(separator: "?", maxSplits: 1).last ?? "").fields.map { ($0.name, $0.value) }) { a, _ in a }
            // Signed out before Apple answered.
            #expect(try await Self.post(fixture, "/account/logout", [("csrf", accountToken)], cookies: [session]).status == 303)
            let sub = "000902.00000000000000000000000000000902.0902"
            let binding: String = try #require(start.cookieValue(SessionCookies.bindingName))
            let callback = try await fixture.callback(
                try fixture.applePost(state: try #require(query["state"]), nonce: try #require(query["nonce"]), sub: sub), binding: binding)
            #expect(callback.status == 400)
            #expect(try fixture.database.read { try $0.queryOne("SELECT COUNT(*) FROM users WHERE apple_sub = ?", [.text(sub)])?.int(0) } == 0)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func theResetPageCarriesItsCodeAndAWeakPasswordKeepsIt(_ engine: DatabaseEngine) async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        try await withFixture(Fixture(engine: engine) {
            $0.webhookURL = receiver.url
            $0.webhookSecret = receiver.secretBytes
        }) { fixture in
            let (cookie, token) = try await Self.formToken(fixture)
            let form = "\(SessionCookies.formName)=\(cookie)"
            _ = try await Self.post(fixture, "/auth/password/sign-up", [("csrf", token), ("email", "cy@example.com"), ("password", "correct horse battery")], cookies: [form])
            let requested = try await Self.post(fixture, "/auth/password/reset-request", [("csrf", token), ("email", "cy@example.com")], cookies: [form])
            #expect(requested.header("Location") == "/?reset=requested")
            let code = try #require(await receiver.passwordResetRequests(1)?.first?["code"])
            let page = try await fixture.send("GET", "/reset-password?code=\(code)", headers: ["Cookie": form])
            #expect(page.body.contains(#"value="\#(code)""#))
            let weak = try await Self.post(fixture, "/auth/password/reset", [("csrf", token), ("code", code), ("new_password", "basketball")], cookies: [form])
            #expect(weak.header("Location") == "/reset-password?error=weak_password&code=\(code)")
            let done = try await Self.post(fixture, "/auth/password/reset", [("csrf", token), ("code", code), ("new_password", "a brand new password")], cookies: [form])
            #expect(done.header("Location") == "/?reset=done")
            let signedIn = try await Self.post(fixture, "/auth/password/sign-in", [("csrf", token), ("email", "cy@example.com"), ("password", "a brand new password")], cookies: [form])
            #expect(signedIn.header("Location") == "/account")
        }
    }

    /// docs/guides/passwords-and-email.md: the forgot-password form is answered before its email is looked up, as the
    /// API is: with the work held, a known and an unknown email get the same 303, and only the
    /// known one gets a code once the work runs.
    @Test(arguments: DatabaseEngine.available)
    func theForgotPasswordFormAnswersBeforeTheLookup(_ engine: DatabaseEngine) async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        try await withFixture(Fixture(engine: engine) {
            $0.webhookURL = receiver.url
            $0.webhookSecret = receiver.secretBytes
        }) { fixture in
            let (cookie, token) = try await Self.formToken(fixture)
            let form = "\(SessionCookies.formName)=\(cookie)"
            _ = try await Self.post(fixture, "/auth/password/sign-up", [("csrf", token), ("email", "cy@example.com"), ("password", "correct horse battery")], cookies: [form])
            let queue = fixture.harness.application.emailRequests
            let gate = Gate()
            queue.holdEachJob { await gate.wait("work") }

            let known = try await Self.post(fixture, "/auth/password/reset-request", [("csrf", token), ("email", "cy@example.com")], cookies: [form])
            let unknown = try await Self.post(fixture, "/auth/password/reset-request", [("csrf", token), ("email", "nobody@example.com")], cookies: [form])
            #expect(known.status == 303 && known.header("Location") == "/?reset=requested")
            #expect(unknown.status == 303 && unknown.header("Location") == "/?reset=requested")
            #expect(queue.outstanding == 2)
            #expect(try fixture.count("password_reset_codes") == 0)

            gate.open("work")
            #expect(await receiver.passwordResetRequests(1)?.first?["email"] == "cy@example.com")
            await queue.idle()
            #expect(try fixture.count("password_reset_codes") == 1)
        }
    }

    /// docs/guides/passwords-and-email.md: the link's page only shows a button (fetching it uses nothing up); the button
    /// posts the code with the form's token and the page then says the address is verified.
    @Test(arguments: DatabaseEngine.available)
    func theVerifyPageUsesTheCodeOnlyWhenItsButtonIsPressed(_ engine: DatabaseEngine) async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        try await withFixture(Fixture(engine: engine) {
            $0.webhookURL = receiver.url
            $0.webhookSecret = receiver.secretBytes
        }) { fixture in
            let (cookie, token) = try await Self.formToken(fixture)
            let form = "\(SessionCookies.formName)=\(cookie)"
            _ = try await Self.post(fixture, "/auth/password/sign-up", [("csrf", token), ("email", "di@example.com"), ("password", "correct horse battery")], cookies: [form])
            let code = try #require(await receiver.emailVerificationRequests(1)?.first?["code"])
            for _ in 0..<2 {
                let page = try await fixture.send("GET", "/verify-email?code=\(code)")
                #expect(page.status == 200)
                WebFlowTests.expectPageHeaders(page)
                #expect(page.body.contains(#"action="/auth/email/verify""#) && page.body.contains(#"value="\#(code)""#))
                #expect(!page.body.contains("<script>"))
            }
            #expect(try fixture.database.read { try $0.queryOne("SELECT COUNT(*) FROM email_verification_codes")?.int(0) } == 1)
            // Without the form's token, or from another origin: nothing is used.
            let forged = try await Self.post(fixture, "/auth/email/verify", [("csrf", "forged"), ("code", code)], cookies: [form])
            #expect(forged.status != 303)
            let foreign = try await Self.post(fixture, "/auth/email/verify", [("csrf", token), ("code", code)], cookies: [form], origin: "https://evil.example")
            #expect(foreign.status != 303)
            #expect(try fixture.database.read { try $0.queryOne("SELECT COUNT(*) FROM email_verification_codes")?.int(0) } == 1)

            let done = try await Self.post(fixture, "/auth/email/verify", [("csrf", token), ("code", code)], cookies: [form])
            #expect(done.status == 303 && done.header("Location") == "/verify-email?done=1")
            #expect(try await fixture.send("GET", "/verify-email?done=1").body.contains("Your email address is verified"))
            #expect(try fixture.database.read { try $0.queryOne("SELECT email_verified FROM users")?.int(0) } == 1)
            let again = try await Self.post(fixture, "/auth/email/verify", [("csrf", token), ("code", code)], cookies: [form])
            #expect(again.header("Location") == "/verify-email?error=invalid_grant")
            #expect(try await fixture.send("GET", "/verify-email?error=invalid_grant").body.contains("wrong, used or expired"))
        }
    }
}
