import Foundation
import JSON
import Logging
@testable import Store
import SMTP
import Testing
import TestSupport
import WireFormat
@testable import SiwaApp

/// docs/guides/passwords-and-email.md through the assembled application: the user's language from `Accept-Language` and
/// `PATCH /api/account`, and, with `smtp_url` pointing at aiosmtpd, a sign-up's code arriving
/// by mail (in the user's language, its link usable) instead of by webhook.
@Suite(.timeLimit(.minutes(3)))
struct MailAccountTests {
    typealias Fixture = PasswordRoutesTests.Fixture

    static func signUp(_ fixture: Fixture, _ email: String, language: String?) async throws -> PasswordRoutesTests.Reply {
        try await fixture.send(
            "POST", "/api/auth/password/sign-up", [("email", .string(email)), ("password", .string("correct horse battery"))],
            headers: language.map { ["Accept-Language": $0] } ?? [:])
    }

    @Test(arguments: DatabaseEngine.available)
    func theLocaleComesFromAcceptLanguageAndPatchChangesIt(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let korean = try await Self.signUp(fixture, "kim@example.com", language: "ko-KR,ko;q=0.9,en-US;q=0.8")
            #expect(korean.status == 201 && korean.user?["locale"] == .string("ko"))
            #expect(try await Self.signUp(fixture, "ada@example.com", language: "fr-FR, en;q=0.5, ko;q=0.4").user?["locale"] == .string("en"))
            #expect(try await Self.signUp(fixture, "bob@example.com", language: nil).user?["locale"] == .string("en"))
            let apple = try await fixture.send("POST", "/api/auth/apple", try fixture.apple(PasswordRoutesTests.sub(70)), headers: ["Accept-Language": "ko"])
            #expect(apple.status == 200 && apple.user?["locale"] == .string("ko"), "\(apple.body)")

            let bearer = fixture.bearer(korean.token)
            let changed = try await fixture.send("PATCH", "/api/account", [("locale", .string("en"))], headers: bearer)
            #expect(changed.status == 200 && changed.user?["locale"] == .string("en") && changed.user?["email"] == .string("kim@example.com"))
            #expect(try await fixture.send("GET", "/api/me", headers: bearer).user?["locale"] == .string("en"))

            for body: [(String, JSONValue)] in [[("locale", .string("fr"))], [("locale", .null)], [], [("locale", .string("ko")), ("email", .string("x@example.com"))]] {
                let refused = try await fixture.send("PATCH", "/api/account", body, headers: bearer)
                #expect(refused.status == 400 && refused.error == "invalid_request", "\(body)")
            }
            #expect(try await fixture.send("PATCH", "/api/account", [("locale", .string("ko"))]).status == 401)
            #expect(try await fixture.send("GET", "/api/me", headers: bearer).user?["locale"] == .string("en"), "nothing refused changed it")
        }
    }

    /// With `smtp_url`, the sign-up's code goes by mail in the user's language, and no webhook
    /// carries it; the link's code verifies the address.
    @Test(.enabled(if: PythonTools.testsEnabled))
    func withSMTPTheSignUpCodeArrivesByMailAndVerifiesTheAddress() async throws {
        let server = try await AiosmtpdServer(user: MailDeliveryTests.user, password: MailDeliveryTests.password)
        try await withFixture(Fixture(webhooks: true) {
            $0.smtpURL = try? SMTPURL(
                "smtp://\(FormURLEncoding.escape(MailDeliveryTests.user)):\(FormURLEncoding.escape(MailDeliveryTests.password))@127.0.0.1:\(server.port)")
            $0.emailFrom = try? MailAddress(parsing: "Siwa <noreply@siwa.example.com>")
            $0.smtpCAFile = server.folder + "/ca.pem"
        }) { fixture in
            let made = try await Self.signUp(fixture, "kim@example.com", language: "ko")
            #expect(made.status == 201)
            let arrived = try await server.message(1)
            #expect(arrived["rcpt_tos"] as? [String] == ["kim@example.com"])
            let text = try #require((arrived["parts"] as? [[String: Any]])?.first?["content"] as? String)
            let prefix = "http://localhost:8080/verify-email?code="
            let link = try #require(text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix(prefix) })
            #expect((arrived["subject"] as? String)?.unicodeScalars.contains { (0xAC00...0xD7A3).contains($0.value) } == true, "Korean")

            let verified = try await fixture.send("POST", "/api/auth/email/verify", [("code", .string(String(link.dropFirst(prefix.count))))])
            #expect(verified.status == 200 && verified.user?["email_verified"] == .bool(true), "\(verified.body)")
            let receiver = try #require(fixture.receiver)
            #expect(await receiver.wait { $0.contains { $0.type == "user.updated" } })
            #expect(!receiver.deliveries.contains { $0.type == "user.email_verification_requested" }, "no webhook carries the code")
        }
    }
}

extension MailAccountTests {
    /// The store the server opens with `smtp_url` reports a message dropped for a relay address
    /// whose forwarding is off in `siwa_email_suppressed_total{reason="relay_disabled"}`.
    @Test func aRelayAddressWithoutForwardingIsCountedAsSuppressed() async throws {
        let folder = NSTemporaryDirectory() + "siwa-mail-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = try Configuration(settings: [:], isTerminal: false)
        configuration.database = folder + "/siwa.sqlite3"
        configuration.dataKey = [UInt8](repeating: 3, count: 32)
        configuration.smtpURL = try SMTPURL("smtp://127.0.0.1:2525")
        configuration.emailFrom = try MailAddress(parsing: "noreply@siwa.example.com")
        let metrics = Metrics()
        let (store, _) = try Store.open(configuration, connections: 2, logger: Logger(label: "test"), suppressed: metrics.emailSuppressed)
        defer { store.close() }
        let id = try await store.engine.write { connection in
            let user = try UserStore.upsertOnSignIn(
                in: connection,
                identity: VerifiedIdentity(appleSub: "relay.9", email: "r9@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true),
                profile: nil, now: 1_000
            ).user
            try connection.run("UPDATE users SET email_forwarding = 'disabled' WHERE id = ?", [.text(user.id)])
            return user.id
        }
        _ = try await store.deleteUser(userID: id, now: 1_100, firstAttemptAt: 1_100)
        #expect(try await store.mail.depth().count == 0)
        #expect(metrics.emailSuppressed.count("relay_disabled") == 1)
        #expect(await metrics.render().contains(#"siwa_email_suppressed_total{reason="relay_disabled"} 1"#))
    }
}
