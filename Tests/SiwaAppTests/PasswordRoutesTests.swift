import AppleSimulator
import Foundation
import HTTPServer
import JSON
import Synchronization
import Testing
import TestSupport
@testable import SiwaApp

/// docs/guides/passwords-and-email.md in process on both engines, with a socket sample: every route of password
/// accounts, the upgrade and linking, with their errors, against the Apple ID simulator.
@Suite(.timeLimit(.minutes(3)))
struct PasswordRoutesTests {
    static let app = "com.example.app"

    struct Reply {
        let status: Int
        let headers: [String: String]
        let body: String
        var json: JSONObject? { try? JSONParser.parse(body).object }
        var error: String? { json?["error"]?.string }
        var user: JSONObject? { json?["user"]?.object ?? json }
        var token: String? { json?["session"]?.object?["token"]?.string }
        var methods: [String] { (user?["sign_in_methods"]?.array ?? []).compactMap(\.string) }
    }

    /// Sendable for concurrent requests: its fields are constants, and each request is its own.
    final class Fixture: @unchecked Sendable, Stoppable {
        let harness: TestApp
        /// SQL on the application's own store (no second handle on its file).
        let database: StoreSQL
        let clock: HeldClock
        /// The team's backend, with `webhooks`: where reset codes arrive.
        let receiver: WebhookReceiver?

        init(
            engine: DatabaseEngine = .sqlite, transport: Transport = .inProcess, webhooks: Bool = false,
            configure: (inout Configuration) -> Void = { _ in }
        ) async throws {
            let clock = HeldClock(Int64(Date().timeIntervalSince1970))
            self.clock = clock
            let receiver = webhooks ? try WebhookReceiver() : nil
            self.receiver = receiver
            harness = try await TestApp(engine: engine, transport: transport, clock: clock) {
                $0.clientIDs = [PasswordRoutesTests.app]
                $0.publicURL = "http://localhost:8080"
                if let receiver {
                    $0.webhookURL = receiver.url
                    $0.webhookSecret = receiver.secretBytes
                }
                configure(&$0)
            }
            _ = try await harness.waitUntilReady()
            database = StoreSQL(harness.application.store)
        }

        var simulator: AppleIDSimulator { harness.simulator }

        func send(_ method: String, _ path: String, _ body: [(String, JSONValue)]? = nil, headers: [String: String] = [:]) async throws -> Reply {
            let text = body.map { JSONWriter.string(.object(JSONObject($0))) } ?? ""
            var fields = headers.map { ($0.key, $0.value) }
            if body != nil { fields.append(("Content-Type", "application/json")) }
            let reply = try await harness.send(HTTPMethod(method), path, headers: fields, body: text)
            return Reply(status: reply.status, headers: reply.headers, body: reply.body)
        }

        func bearer(_ token: String?) -> [String: String] { ["Authorization": "Bearer \(token ?? "")"] }

        func signUp(_ email: String, _ password: String = "correct horse battery", name: String? = nil) async throws -> Reply {
            var body: [(String, JSONValue)] = [("email", .string(email)), ("password", .string(password))]
            if let name { body.append(("name", .object(JSONObject([("given", .string(name))])))) }
            return try await send("POST", "/api/auth/password/sign-up", body)
        }

        func signIn(_ email: String, _ password: String = "correct horse battery", headers: [String: String] = [:]) async throws -> Reply {
            try await send("POST", "/api/auth/password", [("email", .string(email)), ("password", .string(password))], headers: headers)
        }

        /// A fresh identity token (and its code) from the simulator, as the phone would get it.
        func apple(_ sub: String, email: String? = nil, nonce: String = UUID().uuidString) throws -> [(String, JSONValue)] {
            let issued = try simulator.issueCode(sub: sub, clientID: PasswordRoutesTests.app, nonce: nonce, email: email)
            return [("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string(nonce))]
        }

        func appleSignIn(_ sub: String, email: String? = nil, extra: [(String, JSONValue)] = []) async throws -> Reply {
            try await send("POST", "/api/auth/apple", try apple(sub, email: email) + extra)
        }

        func count(_ table: String, _ condition: String = "1 = 1") throws -> Int {
            try database.read { try $0.queryOne("SELECT COUNT(*) FROM \(table) WHERE \(condition)", [])?.int(0) ?? -1 }
        }

        /// Marks the password's email proven, as its verification code would (docs/guides/passwords-and-email.md).
        func prove(_ email: String) async throws {
            try await database.write { _ = try $0.run("UPDATE password_credentials SET email_verified = 1 WHERE email = ?", [.text(email)]) }
        }

        func stop() async {
            database.close()
            await harness.stop()
            receiver?.stop()
        }
    }

    static func sub(_ n: Int) -> String { "000900.\(String(repeating: "0", count: 29))\(100 + n).0900" }

    // MARK: - Sign-up and sign-in

    /// The socket sample.
    @Test(arguments: DatabaseEngine.available, Transport.allCases)
    func signUpThenSignInWithThePassword(_ engine: DatabaseEngine, _ transport: Transport) async throws {
        try await withFixture(Fixture(engine: engine, transport: transport)) { fixture in
            let made = try await fixture.signUp(" Ada@Example.com ", name: "Ada")
            #expect(made.status == 201, "\(made.body)")
            #expect(made.json?["created"] == .bool(true))
            #expect(made.methods == ["password"])
            #expect(made.user?["email"]?.string == "Ada@Example.com")
            #expect(made.user?["email_verified"] == .bool(false))
            #expect(made.user?["apple_sub"] == .null)
            #expect(made.user?["apple_credential"] == .null)
            #expect(made.user?["name"]?.object?["given"]?.string == "Ada")
            let me = try await fixture.send("GET", "/api/me", headers: fixture.bearer(made.token))
            #expect(me.status == 200 && me.json?["id"] == made.user?["id"])
            // Forward authentication names no Apple ID for this user.
            let verify = try await fixture.send("GET", "/auth/verify", headers: fixture.bearer(made.token))
            #expect(verify.status == 204)
            #expect(verify.headers["x-siwa-user-id"] == made.user?["id"]?.string)
            #expect(verify.headers["x-siwa-apple-sub"] == nil)

            let signedIn = try await fixture.signIn("ada@EXAMPLE.com")
            #expect(signedIn.status == 200, "\(signedIn.body)")
            #expect(signedIn.json?["created"] == .bool(false))
            #expect(signedIn.user?["id"] == made.user?["id"])
            #expect(try await fixture.send("GET", "/api/me", headers: fixture.bearer(signedIn.token)).status == 200)

            // A page of this site gets the session cookie too.
            let fromPage = try await fixture.signIn("ada@example.com", headers: ["Origin": "http://localhost:8080"])
            #expect(fromPage.headers["set-cookie"]?.hasPrefix("siwa_session=") == true)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aWrongEmailAndAWrongPasswordReadAlike(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            _ = try await fixture.signUp("ada@example.com")
            let wrongPassword = try await fixture.signIn("ada@example.com", "wrong horse battery")
            let wrongEmail = try await fixture.signIn("nobody@example.com")
            #expect(wrongPassword.status == 401 && wrongEmail.status == 401)
            #expect(wrongPassword.error == "invalid_credentials")
            #expect(wrongPassword.body == wrongEmail.body)
            #expect(fixture.harness.application.metrics.signIns.count("success") == 0)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func badRequestsWeakPasswordsAndTakenEmailsAreRefused(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            #expect(try await fixture.send("POST", "/api/auth/password/sign-up", [("email", .string("ada@example.com"))]).error == "invalid_request")
            #expect(try await fixture.send("POST", "/api/auth/password/sign-up", [("email", .integer(1)), ("password", .string("x"))]).error == "invalid_request")
            #expect(try await fixture.signUp("not-an-email").error == "invalid_request")
            #expect(try await fixture.signIn("ada@example.com", "").error == "invalid_request")
            for weak in ["short", "basketball", "ada.lovelace-1815!"] {
                let reply = try await fixture.signUp("ada.lovelace@example.com", weak)
                #expect(reply.status == 400 && reply.error == "weak_password", "\(weak): \(reply.body)")
                #expect(!reply.body.contains(weak))
            }
            #expect(try fixture.count("users") == 0)
            #expect(try await fixture.signUp("ada@example.com").status == 201)
            let again = try await fixture.signUp("ADA@example.com", "another long password")
            #expect(again.status == 409 && again.error == "account_exists")
            // An Apple user's verified, non-relay email is taken too.
            #expect(try await fixture.appleSignIn(Self.sub(1), email: "bob@example.com").status == 200)
            #expect(try await fixture.signUp("bob@example.com").error == "account_exists")
            #expect(try fixture.count("users") == 2)
        }
    }

    // MARK: - Attempt limits

    @Test(arguments: DatabaseEngine.available)
    func fiveFailuresForOneEmailAreTheLimitUntilTheWindowPasses(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            _ = try await fixture.signUp("ada@example.com")
            for _ in 0..<5 { #expect(try await fixture.signIn("ada@example.com", "wrong horse battery").status == 401) }
            let limited = try await fixture.signIn("ada@example.com")
            #expect(limited.status == 429 && limited.error == "too_many_attempts", "\(limited.body)")
            #expect(limited.headers["retry-after"] == "900")
            fixture.clock.advance(by: 600)
            #expect(try await fixture.signIn("ada@example.com").headers["retry-after"] == "300")
            fixture.clock.advance(by: 300)
            #expect(try await fixture.signIn("ada@example.com").status == 200)
            // The success reset the count: five more failures are allowed.
            for _ in 0..<5 { #expect(try await fixture.signIn("ada@example.com", "wrong horse battery").status == 401) }
            #expect(try await fixture.signIn("ada@example.com").status == 429)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func twentyFailuresFromOneAddressAreTheLimit(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            for index in 0..<20 { #expect(try await fixture.signIn("u\(index)@example.com").status == 401) }
            let limited = try await fixture.signIn("someone-else@example.com")
            #expect(limited.status == 429 && limited.error == "too_many_attempts")
            #expect(Int(limited.headers["retry-after"] ?? "") == 900)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aBurstPastTheHashingQueueIsBusyNotFailed(_ engine: DatabaseEngine) async throws {
        // One hashing thread and its queue of eight; clients behind a trusted proxy, each its own address.
        try await withFixture(Fixture(engine: engine) { $0.threads = 1; $0.trustedProxies = try! CIDRSet(cidrs: ["127.0.0.0/8"]) }) { fixture in
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        try await fixture.signIn("u\(index)@example.com", headers: ["X-Forwarded-For": "198.51.100.\(index + 1)"])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let busy = replies.filter { $0.status == 503 }
            #expect(!busy.isEmpty)
            #expect(busy.allSatisfy { $0.error == "busy" })
            #expect(replies.allSatisfy { $0.status == 401 || $0.status == 503 })
            // A busy refusal counts no failure: only the checked attempts left their email's count.
            #expect(try fixture.count("password_attempts", "failures > 0") == 2 * (40 - busy.count))
        }
    }

    // MARK: - Changing a password

    @Test(arguments: DatabaseEngine.available)
    func changingThePasswordNeedsTheCurrentOneAndEndsTheOtherSessions(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let made = try await fixture.signUp("ada@example.com")
            let other = try await fixture.signIn("ada@example.com")
            let change: (String?, String) -> [(String, JSONValue)] = { current, new in
                [("current_password", current.map(JSONValue.string) ?? .null), ("new_password", .string(new))]
            }
            #expect(try await fixture.send("PUT", "/api/account/password", change(nil, "a new long password"), headers: fixture.bearer(made.token)).error == "invalid_credentials")
            #expect(try await fixture.send("PUT", "/api/account/password", change("wrong horse battery", "a new long password"), headers: fixture.bearer(made.token)).error == "invalid_credentials")
            #expect(try await fixture.send("PUT", "/api/account/password", change("correct horse battery", "qwertyuiop"), headers: fixture.bearer(made.token)).error == "weak_password")
            #expect(try await fixture.send("PUT", "/api/account/password", change("correct horse battery", "a new long password")).status == 401)
            // The cookie of a page must come with this site's Origin.
            let forged = try await fixture.send(
                "PUT", "/api/account/password", change("correct horse battery", "a new long password"), headers: ["Cookie": "siwa_session=\(made.token ?? "")"])
            #expect(forged.status == 403 && forged.error == "forbidden")

            let changed = try await fixture.send("PUT", "/api/account/password", change("correct horse battery", "a new long password"), headers: fixture.bearer(made.token))
            #expect(changed.status == 204, "\(changed.body)")
            #expect(try await fixture.send("GET", "/api/me", headers: fixture.bearer(made.token)).status == 200)
            #expect(try await fixture.send("GET", "/api/me", headers: fixture.bearer(other.token)).status == 401)
            #expect(try await fixture.signIn("ada@example.com").status == 401)
            #expect(try await fixture.signIn("ada@example.com", "a new long password").status == 200)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aFirstPasswordNeedsASessionMadeInTheLastTenMinutes(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let apple = try await fixture.appleSignIn(Self.sub(2), email: "ada@example.com")
            #expect(apple.methods == ["apple"])
            fixture.clock.advance(by: 601)
            let late = try await fixture.send("PUT", "/api/account/password", [("new_password", .string("correct horse battery"))], headers: fixture.bearer(apple.token))
            #expect(late.status == 403 && late.error == "reauthentication_required", "\(late.body)")
            fixture.clock.advance(by: -601)
            let set = try await fixture.send("PUT", "/api/account/password", [("new_password", .string("correct horse battery"))], headers: fixture.bearer(apple.token))
            #expect(set.status == 204, "\(set.body)")
            let me = try await fixture.send("GET", "/api/me", headers: fixture.bearer(apple.token))
            #expect(me.json?["sign_in_methods"] == .array([.string("apple"), .string("password")]))
            #expect(try await fixture.signIn("ada@example.com").user?["id"] == me.json?["id"])
        }
    }

    // MARK: - Reset

    @Test(arguments: DatabaseEngine.available)
    func resetsNeedAWebhookURL(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let reply = try await fixture.send("POST", "/api/auth/password/reset-request", [("email", .string("ada@example.com"))])
            #expect(reply.status == 503 && reply.error == "not_configured")
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aResetCodeFromTheWebhookWorksOnceWithinThirtyMinutes(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine, webhooks: true)) { fixture in
            let made = try await fixture.signUp("ada@example.com")
            let userID = try #require(made.user?["id"]?.string)
            for email in ["nobody@example.com", "ADA@example.com"] {
                let reply = try await fixture.send("POST", "/api/auth/password/reset-request", [("email", .string(email))])
                #expect(reply.status == 202 && reply.json?["status"]?.string == "accepted")
            }
            // The code reaches the team's backend in the event, as it would to email a link.
            func codes(_ count: Int) async throws -> [(code: String, expires: String)] {
                try #require(await fixture.receiver?.passwordResetRequests(count)).map { data in
                    #expect(data["id"] == userID && data["email"] == "ada@example.com")
                    return (try #require(data["code"]), try #require(data["expires_at"]))
                }
            }
            let first = try #require(try await codes(1).first)
            #expect(first.code.count == 22)  // 128 bits, base64url
            #expect(first.expires == RFC3339.format(fixture.clock.now + 1_800))
            // Only its hash is stored.
            #expect(try fixture.count("password_reset_codes") == 1)
            #expect(try fixture.database.read { try $0.queryOne("SELECT COUNT(*) FROM password_reset_codes WHERE code_hash = ?", [.text(first.code)])?.int(0) } == 0)

            let reset: (String, String) -> [(String, JSONValue)] = { [("code", .string($0)), ("new_password", .string($1))] }
            #expect(try await fixture.send("POST", "/api/auth/password/reset", reset("not-a-code", "a brand new password")).error == "invalid_grant")
            // A weak password leaves the code usable.
            #expect(try await fixture.send("POST", "/api/auth/password/reset", reset(first.code, "qwertyuiop")).error == "weak_password")
            let done = try await fixture.send("POST", "/api/auth/password/reset", reset(first.code, "a brand new password"))
            #expect(done.status == 204, "\(done.body)")
            #expect(try await fixture.send("GET", "/api/me", headers: fixture.bearer(made.token)).status == 401)
            #expect(try await fixture.signIn("ada@example.com", "a brand new password").status == 200)
            let reused = try await fixture.send("POST", "/api/auth/password/reset", reset(first.code, "another new password"))
            #expect(reused.status == 400 && reused.error == "invalid_grant")

            // A code past its 30 minutes.
            _ = try await fixture.send("POST", "/api/auth/password/reset-request", [("email", .string("ada@example.com"))])
            let late = try #require(try await codes(2).last)
            fixture.clock.advance(by: 1_800)
            #expect(try await fixture.send("POST", "/api/auth/password/reset", reset(late.code, "another new password")).error == "invalid_grant")
            #expect(try await fixture.signIn("ada@example.com", "a brand new password").status == 200)
        }
    }

    // MARK: - The upgrade

    @Test(arguments: DatabaseEngine.available)
    func theUpgradeBindsTheAppleIDAndRemovesThePassword(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let made = try await fixture.signUp("ada@example.com")
            let body = [("email", JSONValue.string("ada@example.com")), ("password", .string("correct horse battery"))]
                + (try fixture.apple(Self.sub(3), email: "ada@privaterelay.appleid.com"))
            let upgraded = try await fixture.send("POST", "/api/auth/apple/upgrade", body)
            #expect(upgraded.status == 200, "\(upgraded.body)")
            #expect(upgraded.json?["created"] == .bool(false))
            #expect(upgraded.user?["id"] == made.user?["id"])
            #expect(upgraded.methods == ["apple"])
            #expect(upgraded.user?["apple_sub"]?.string == Self.sub(3))
            #expect(try await fixture.send("GET", "/api/me", headers: fixture.bearer(upgraded.token)).status == 200)
            // The code went to Apple and its tokens are kept.
            #expect(fixture.simulator.calls.contains { $0.endpoint == "token" })
            #expect(try fixture.count("apple_tokens") == 1)
            // The password is gone; Sign in with Apple finds the same account.
            #expect(try await fixture.signIn("ada@example.com").status == 401)
            let apple = try await fixture.appleSignIn(Self.sub(3))
            #expect(apple.status == 200 && apple.user?["id"] == made.user?["id"] && apple.json?["created"] == .bool(false))
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aFailedUpgradeLeavesBothAccountsAsTheyWere(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            _ = try await fixture.signUp("ada@example.com")
            let bob = try await fixture.appleSignIn(Self.sub(4))
            let password: [(String, JSONValue)] = [("email", .string("ada@example.com")), ("password", .string("correct horse battery"))]

            // A bad token: the password stays.
            var forged = try fixture.apple(Self.sub(5))
            forged[0].1 = .string(String((forged[0].1.string ?? "").dropLast(4)) + "AAAA")
            let badToken = try await fixture.send("POST", "/api/auth/apple/upgrade", password + forged)
            #expect(badToken.status == 401 && badToken.error == "invalid_token", "\(badToken.body)")
            // A wrong password: nothing is checked at Apple.
            let wrong = try await fixture.send(
                "POST", "/api/auth/apple/upgrade", [("email", .string("ada@example.com")), ("password", .string("wrong horse battery"))] + (try fixture.apple(Self.sub(5))))
            #expect(wrong.status == 401 && wrong.error == "invalid_credentials")
            // Bob's Apple ID: refused before its code goes to Apple; both users untouched.
            let tokenCalls = fixture.simulator.calls.filter { $0.endpoint == "token" }.count
            let usersBefore = try fixture.database.read { try $0.query("SELECT * FROM users ORDER BY id", []).map { "\($0)" } }
            let taken = try await fixture.send("POST", "/api/auth/apple/upgrade", password + (try fixture.apple(Self.sub(4))))
            #expect(taken.status == 409 && taken.error == "apple_id_in_use", "\(taken.body)")
            #expect(fixture.simulator.calls.filter { $0.endpoint == "token" }.count == tokenCalls)
            #expect(try fixture.database.read { try $0.query("SELECT * FROM users ORDER BY id", []).map { "\($0)" } } == usersBefore)
            #expect(try await fixture.send("GET", "/api/me", headers: fixture.bearer(bob.token)).json?["sign_in_methods"] == .array([.string("apple")]))
            #expect(try await fixture.signIn("ada@example.com").methods == ["password"])
        }
    }

    // MARK: - Linking

    @Test(arguments: DatabaseEngine.available)
    func linkingAndUnlinkingAnAppleID(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let made = try await fixture.signUp("ada@example.com")
            try await fixture.prove("ada@example.com")
            let linked = try await fixture.send("POST", "/api/account/apple", try fixture.apple(Self.sub(6)), headers: fixture.bearer(made.token))
            #expect(linked.status == 200, "\(linked.body)")
            #expect(linked.methods == ["apple", "password"])
            #expect(try await fixture.appleSignIn(Self.sub(6)).user?["id"] == made.user?["id"])

            // Another user cannot link the same Apple ID.
            let bob = try await fixture.signUp("bob@example.com")
            try await fixture.prove("bob@example.com")
            let taken = try await fixture.send("POST", "/api/account/apple", try fixture.apple(Self.sub(6)), headers: fixture.bearer(bob.token))
            #expect(taken.status == 409 && taken.error == "apple_id_in_use")

            // Unlinking queues the revocation of the Apple tokens; the worker sends it to Apple.
            let unlinked = try await fixture.send("DELETE", "/api/account/apple", headers: fixture.bearer(made.token))
            #expect(unlinked.status == 200 && unlinked.methods == ["password"], "\(unlinked.body)")
            #expect(try await eventually { fixture.simulator.calls.contains { $0.endpoint == "revoke" } })
            #expect(try fixture.count("apple_tokens") == 0)
            // The password is now the only way in.
            let last = try await fixture.send("DELETE", "/api/account/password", headers: fixture.bearer(made.token))
            #expect(last.status == 409 && last.error == "last_sign_in_method")
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func linkingNeedsARecentSignInAndTheLastMethodStays(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let made = try await fixture.signUp("ada@example.com")
            try await fixture.prove("ada@example.com")
            fixture.clock.advance(by: 601)
            let late = try await fixture.send("POST", "/api/account/apple", try fixture.apple(Self.sub(7)), headers: fixture.bearer(made.token))
            #expect(late.status == 403 && late.error == "reauthentication_required")
            let fresh = try await fixture.signIn("ada@example.com")
            #expect(try await fixture.send("POST", "/api/account/apple", try fixture.apple(Self.sub(7)), headers: fixture.bearer(fresh.token)).status == 200)
            let removed = try await fixture.send("DELETE", "/api/account/password", headers: fixture.bearer(fresh.token))
            #expect(removed.status == 200 && removed.methods == ["apple"])
            let last = try await fixture.send("DELETE", "/api/account/apple", headers: fixture.bearer(fresh.token))
            #expect(last.status == 409 && last.error == "last_sign_in_method")
        }
    }

    // MARK: - No silent merges

    @Test(arguments: DatabaseEngine.available)
    func anAppleSignInWithAPasswordAccountsEmailIsRefusedAndItsNameKept(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let made = try await fixture.signUp("ada@example.com")
            // Only a proven email refuses (docs/guides/passwords-and-email.md).
            try await fixture.prove("ada@example.com")
            let user: (String, JSONValue) = ("user", .object(JSONObject([("name", .object(JSONObject([("firstName", .string("Ada")), ("lastName", .string("Lovelace"))])))])))
            let refused = try await fixture.appleSignIn(Self.sub(8), email: "Ada@Example.com", extra: [user])
            #expect(refused.status == 409 && refused.error == "account_exists", "\(refused.body)")
            #expect(try fixture.count("users") == 1)
            #expect(try fixture.count("pending_profiles") == 1)
            // The code never went to Apple.
            #expect(!fixture.simulator.calls.contains { $0.endpoint == "token" })
            // The person signs in with the password and upgrades: the name Apple sent is adopted.
            let upgraded = try await fixture.send(
                "POST", "/api/auth/apple/upgrade",
                [("email", .string("ada@example.com")), ("password", .string("correct horse battery"))] + (try fixture.apple(Self.sub(8))))
            #expect(upgraded.status == 200, "\(upgraded.body)")
            #expect(upgraded.user?["id"] == made.user?["id"])
            #expect(upgraded.user?["name"]?.object?["family"]?.string == "Lovelace")
        }
    }
}
