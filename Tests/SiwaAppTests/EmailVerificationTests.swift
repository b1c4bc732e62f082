import Foundation
import JSON
import Testing
import TestSupport
import WireFormat
@testable import SiwaApp
@testable import Store

/// docs/guides/passwords-and-email.md "Verification" and "Limits": the codes that prove a password's email, what they
/// unlock, and what a reset does to an Apple ID attached while the email was unproven.
@Suite(.timeLimit(.minutes(3)))
struct EmailVerificationTests {
    typealias Engine = DatabaseEngine
    typealias Fixture = EmailVerificationFixture
    static let verification = "user.email_verification_requested"

    @Test(arguments: Engine.available)
    func aSignUpsCodeProvesTheEmailOnceWithinADay(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let made = try await fixture.signUp("Ada@Example.com")
            #expect(made.user?["email_verified"] == .bool(false))
            let userID = try #require(made.user?["id"]?.string)
            let sent = try #require(try await fixture.codes(Self.verification, 1).first)
            #expect(sent["id"] == userID && sent["email"] == "ada@example.com")
            #expect(sent["expires_at"] == RFC3339.format(fixture.clock.now + 86_400))
            let code = try #require(sent["code"])
            #expect(code.count == 22 && Base64.url.decode(code.utf8)?.count == 16)
            // Only its hash is stored.
            #expect(try await fixture.count("email_verification_codes") == 1)

            let verify: (String) -> [(String, JSONValue)] = { [("code", .string($0))] }
            let wrong = try await fixture.send("POST", "/api/auth/email/verify", verify("not-a-code"))
            #expect(wrong.status == 400 && wrong.error == "invalid_grant")
            let missing = try await fixture.send("POST", "/api/auth/email/verify", [])
            #expect(missing.status == 400 && missing.error == "invalid_request")
            #expect(try await fixture.send("GET", "/api/me", token: made.token).json?["email_verified"] == .bool(false))

            // No session needed: the code is the proof.
            let done = try await fixture.send("POST", "/api/auth/email/verify", verify(code))
            #expect(done.status == 200, "\(done.body)")
            #expect(done.json?["id"]?.string == userID && done.json?["email_verified"] == .bool(true))
            #expect(try await fixture.send("GET", "/api/me", token: made.token).json?["email_verified"] == .bool(true))
            let used = try await fixture.send("POST", "/api/auth/email/verify", verify(code))
            #expect(used.status == 400 && used.error == "invalid_grant")
            #expect(try await fixture.count("email_verification_codes") == 0)
            // Proven: asking again sends nothing.
            #expect(try await fixture.send("POST", "/api/account/email/verify-request", token: made.token).status == 202)
            #expect(try await fixture.count("email_verification_codes") == 0)

            // Another account's code, past its 24 hours.
            let bob = try await fixture.signUp("bob@example.com")
            let late = try #require(try await fixture.codes(Self.verification, 2).last?["code"])
            fixture.clock.advance(by: 86_400)
            let expired = try await fixture.send("POST", "/api/auth/email/verify", verify(late))
            #expect(expired.status == 400 && expired.error == "invalid_grant")
            fixture.clock.advance(by: -86_400 + 10)
            #expect(try await fixture.send("POST", "/api/auth/email/verify", verify(late)).error == "invalid_grant", "an expired code is used up")
            #expect(try await fixture.send("GET", "/api/me", token: bob.token).json?["email_verified"] == .bool(false))
            // A new one for Bob, asked with his session.
            #expect(try await fixture.send("POST", "/api/account/email/verify-request").status == 401)
            #expect(try await fixture.send("POST", "/api/account/email/verify-request", token: bob.token).status == 202)
            let fresh = try #require(try await fixture.codes(Self.verification, 3).last)
            #expect(fresh["id"] == bob.user?["id"]?.string)
            #expect(try await fixture.send("POST", "/api/auth/email/verify", verify(try #require(fresh["code"]))).json?["email_verified"] == .bool(true))
        }
    }

    @Test(arguments: Engine.available)
    func onlyAProvenPasswordEmailRefusesAnAppleSignIn(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            _ = try await fixture.signUp("ada@example.com")
            let code = try #require(try await fixture.codes(Self.verification, 1).first?["code"])
            #expect(try await fixture.send("POST", "/api/auth/email/verify", [("code", .string(code))]).status == 200)
            let refused = try await fixture.appleSignIn(Fixture.sub(10), email: "ADA@example.com")
            #expect(refused.status == 409 && refused.error == "account_exists", "\(refused.body)")
            #expect(try await fixture.count("users") == 1)
        }
    }

    @Test(arguments: Engine.available)
    func linkingAndAFirstPasswordNeedAProvenEmail(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let made = try await fixture.signUp("ada@example.com")
            let userID = try #require(made.user?["id"]?.string)
            let refused = try await fixture.link(Fixture.sub(11), token: made.token)
            #expect(refused.status == 403 && refused.error == "email_unverified", "\(refused.body)")
            #expect(!fixture.simulator.calls.contains { $0.endpoint == "token" })
            #expect(try await fixture.count("users", "apple_sub IS NOT NULL") == 0)
            // Proven, the same link goes through.
            let code = try #require(try await fixture.codes(Self.verification, 1).first?["code"])
            #expect(try await fixture.send("POST", "/api/auth/email/verify", [("code", .string(code))]).status == 200)
            let linked = try await fixture.link(Fixture.sub(11), token: made.token)
            #expect(linked.status == 200 && linked.methods == ["apple", "password"], "\(linked.body)")

            // An Apple user whose email Apple did not vouch for sets no first password.
            let apple = try await fixture.appleSignIn(Fixture.sub(12), email: "bob@example.com")
            let bobID = try #require(apple.user?["id"]?.string)
            try await fixture.execute("UPDATE users SET email_verified = 0 WHERE id = '\(bobID)'")
            let first = try await fixture.send("PUT", "/api/account/password", [("new_password", .string("correct horse battery"))], token: apple.token)
            #expect(first.status == 403 && first.error == "email_unverified", "\(first.body)")
            #expect(try await fixture.count("password_credentials", "user_id = '\(bobID)'") == 0)
            try await fixture.execute("UPDATE users SET email_verified = 1 WHERE id = '\(bobID)'")
            let set = try await fixture.send("PUT", "/api/account/password", [("new_password", .string("correct horse battery"))], token: apple.token)
            #expect(set.status == 204, "\(set.body)")
            #expect(try await fixture.count("password_credentials", "user_id = '\(bobID)' AND email_verified = 1") == 1)
            _ = userID
        }
    }

    /// An account whose Apple ID was linked while its email was unproven (before this rule,
    /// as a migrated database holds them): the reset's code proves the email, and the Apple ID
    /// goes, its tokens queued for revocation at Apple.
    @Test(arguments: Engine.available)
    func aResetProvesTheEmailAndUnbindsAnAppleIDAttachedWhileUnproven(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let made = try await fixture.signUp("victim@example.com", "attacker's own password")
            let userID = try #require(made.user?["id"]?.string)
            try await fixture.execute("UPDATE password_credentials SET email_verified = 1")
            let linked = try await fixture.link(Fixture.sub(13), email: "attacker@example.net", token: made.token)
            #expect(linked.status == 200, "\(linked.body)")
            try await fixture.execute("UPDATE password_credentials SET email_verified = 0")
            #expect(try await fixture.count("apple_tokens") == 1)

            #expect(try await fixture.requestReset("victim@example.com").status == 202)
            let code = try #require(try await fixture.codes("user.password_reset_requested", 1).first?["code"])
            #expect(try await fixture.reset(code, "a brand new password").status == 204)
            #expect(try await fixture.count("users", "id = '\(userID)' AND apple_sub IS NULL AND email_verified = 1 AND email = 'victim@example.com'") == 1)
            #expect(try await fixture.count("password_credentials", "email_verified = 1") == 1)
            #expect(try await fixture.count("apple_tokens") == 0)
            // The revocation is queued durably and the worker sends it to Apple. The simulator logs a
            // call as it arrives, before it revokes: wait for the queue to empty too (Apple answered),
            // or Apple may revoke the grant of the attacker's next code as well.
            #expect(try await eventually(within: .seconds(10)) {
                let queued = try await fixture.store.revocations.depth().count
                return queued == 0 && fixture.simulator.calls.contains { $0.endpoint == "revoke" }
            })
            // The attacker's Apple ID makes an account of its own.
            let attacker = try await fixture.appleSignIn(Fixture.sub(13), email: "attacker@example.net")
            #expect(attacker.status == 200 && attacker.user?["id"]?.string != userID, "\(attacker.body)")
            let victim = try await fixture.signIn("victim@example.com", "a brand new password")
            #expect(victim.user?["id"]?.string == userID && victim.methods == ["password"] && victim.user?["email_verified"] == .bool(true))

            // A later reset of a proven email leaves a linked Apple ID alone.
            let relinked = try await fixture.link(Fixture.sub(14), email: "victim@example.com", token: victim.token)
            #expect(relinked.status == 200, "\(relinked.body)")
            #expect(try await fixture.requestReset("victim@example.com").status == 202)
            let second = try #require(try await fixture.codes("user.password_reset_requested", 2).last?["code"])
            #expect(try await fixture.reset(second, "another new password").status == 204)
            #expect(try await fixture.count("users", "id = '\(userID)' AND apple_sub IS NOT NULL") == 1)
        }
    }

    @Test(arguments: Engine.available)
    func threeCodesOfAKindPerAddressPerHourAndFiveLive(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let made = try await fixture.signUp("ada@example.com")
            // The sign-up's code and two more; the fourth in the hour answers alike and sends nothing.
            for _ in 0..<3 {
                fixture.clock.advance(by: 1)
                #expect(try await fixture.send("POST", "/api/account/email/verify-request", token: made.token).status == 202)
            }
            for _ in 0..<4 { #expect(try await fixture.requestReset("ADA@example.com").status == 202) }
            // Reset requests do their work after the answer.
            await fixture.harness.application.emailRequests.idle()
            _ = try await fixture.codes(Self.verification, 3)
            _ = try await fixture.codes("user.password_reset_requested", 3)
            #expect(try await fixture.count("email_verification_codes") == 3)
            #expect(try await fixture.count("password_reset_codes") == 3)
            #expect(fixture.harness.application.metrics.emailSuppressed.count("rate") == 2)
            let metrics = try await fixture.harness.get("/metrics")
            #expect(metrics.body.contains("siwa_email_suppressed_total{reason=\"rate\"} 2"))

            // The next hour: three more verification codes, of which five stay live.
            fixture.clock.advance(by: 3_600)
            for _ in 0..<3 {
                fixture.clock.advance(by: 1)
                #expect(try await fixture.send("POST", "/api/account/email/verify-request", token: made.token).status == 202)
            }
            let all = try await fixture.codes(Self.verification, 6)
            #expect(try await fixture.count("email_verification_codes") == 5)
            // The oldest went.
            let oldest = try #require(all.first?["code"])
            #expect(try await fixture.send("POST", "/api/auth/email/verify", [("code", .string(oldest))]).error == "invalid_grant")
            let newest = try #require(all.last?["code"])
            #expect(try await fixture.send("POST", "/api/auth/email/verify", [("code", .string(newest))]).status == 200)
            #expect(await fixture.receiver.codeRequests(Self.verification, 7, seconds: 0.2) == nil)
        }
    }
}
