import Foundation
import JSON
import Testing
import TestSupport
@testable import SiwaApp

/// docs/guides/passwords-and-email.md "What an unproven email may not do": the account "pre-hijack", where an attacker
/// squats on someone's email with a password, and the lockout the squat alone caused.
@Suite(.timeLimit(.minutes(3)))
struct PreHijackTests {
    typealias Engine = DatabaseEngine
    typealias Fixture = EmailVerificationFixture

    /// The attacker signs up with the victim's email, links their own Apple ID, and waits for
    /// the victim to recover the account by reset: the attacker's Apple ID must never reach it.
    @Test(arguments: Engine.available)
    func anAppleIDLinkedToAnUnprovenEmailNeverReachesItsOwnersAccount(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let attackerApple = Fixture.sub(1), victimApple = Fixture.sub(2)
            // 1. The squat: the victim's email, the attacker's password.
            let squat = try await fixture.signUp("victim@example.com", "attacker's own password")
            #expect(squat.status == 201, "\(squat.body)")
            let squatID = try #require(squat.user?["id"]?.string)
            // 2. The attacker's Apple ID is refused before its code goes to Apple.
            let linked = try await fixture.link(attackerApple, email: "attacker@example.net", token: squat.token)
            #expect(linked.status == 403 && linked.error == "email_unverified", "\(linked.body)")
            #expect(!fixture.simulator.calls.contains { $0.endpoint == "token" })
            // 3. The victim's Sign in with Apple goes ahead; the squat is gone with it.
            let victim = try await fixture.appleSignIn(victimApple, email: "victim@example.com")
            #expect(victim.status == 200 && victim.json?["created"] == .bool(true), "\(victim.body)")
            let victimID = try #require(victim.user?["id"]?.string)
            #expect(try await fixture.send("GET", "/api/me", token: squat.token).status == 401)
            #expect(try await fixture.signIn("victim@example.com", "attacker's own password").status == 401)
            // The victim may recover by reset too: there is no password left to reset.
            #expect(try await fixture.requestReset("victim@example.com").status == 202)
            // 4. The attacker's Apple ID signs in to an account of its own, never the victim's.
            let attacker = try await fixture.appleSignIn(attackerApple, email: "attacker@example.net")
            #expect(attacker.status == 200, "\(attacker.body)")
            #expect(attacker.user?["id"]?.string != victimID && attacker.user?["id"]?.string != squatID)
            let me = try await fixture.send("GET", "/api/me", token: victim.token)
            #expect(me.json?["id"]?.string == victimID && me.json?["apple_sub"]?.string == victimApple)
        }
    }

    /// Without a link, the squat alone used to lock the owner out of Sign in with Apple (409).
    @Test(arguments: Engine.available)
    func anUnprovenPasswordEmailLocksNobodyOutOfSignInWithApple(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            let squat = try await fixture.signUp("Victim@Example.com", "attacker's own password")
            let squatID = try #require(squat.user?["id"]?.string)
            // A relay address proves nothing about the squatted one: nobody is deleted.
            let relay = try await fixture.appleSignIn(Fixture.sub(3), email: "victim@example.com", relay: true)
            #expect(relay.status == 200, "\(relay.body)")
            #expect(try await fixture.send("GET", "/api/me", token: squat.token).status == 200)

            let victim = try await fixture.appleSignIn(Fixture.sub(4), email: "victim@EXAMPLE.com")
            #expect(victim.status == 200 && victim.json?["created"] == .bool(true), "\(victim.body)")
            #expect(victim.methods == ["apple"])
            // The squat is deleted in the same transaction, and the team's backend hears why.
            #expect(try await fixture.send("GET", "/api/me", token: squat.token).status == 401)
            let deleted = await fixture.receiver.wait { $0.contains { $0.accepted && $0.type == "user.deleted" } }
            #expect(deleted)
            let event = try #require(fixture.events.first { $0.type == "user.deleted" })
            #expect(event.data["id"] as? String == squatID && event.data["reason"] as? String == "email_claimed")
            #expect(fixture.events.filter { $0.type == "user.deleted" }.count == 1)
            // A password sign-up with the address now finds its proven owner.
            #expect(try await fixture.signUp("victim@example.com").status == 409)
        }
    }
}
