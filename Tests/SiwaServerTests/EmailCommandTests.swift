import AppleSimulator
import Foundation
import JSON
import Testing
import TestSupport
import WireFormat

/// The real binary sending mail (docs/guides/passwords-and-email.md) to aiosmtpd: `email failed`, `email retry` and
/// `email test` while the server runs; a message committed but not delivered when the process
/// is killed with SIGKILL, delivered by the next one; the settings checked by `check-config`,
/// `serve` and `doctor`, the SMTP password never shown.
@Suite(.enabled(if: PythonTools.testsEnabled), .timeLimit(.minutes(3)))
struct EmailCommandTests {
    static let user = "mailer@siwa.example.com"
    static let password = "smtp-Pass-hush-7"

    static func settings(_ server: AiosmtpdServer, port: UInt16? = nil, password: String = password) -> [String: String] {
        [
            "SIWA_SMTP_URL": "smtp://\(FormURLEncoding.escape(user)):\(password)@127.0.0.1:\(port ?? server.port)",
            "SIWA_EMAIL_FROM": "Siwa <noreply@siwa.example.com>", "SIWA_SMTP_CA_FILE": server.folder + "/ca.pem",
            "SIWA_PUBLIC_URL": "http://localhost:8080",
        ]
    }

    static func signUp(port: UInt16, _ email: String) async throws -> String {
        let body = JSONWriter.string(.object(JSONObject([("email", .string(email)), ("password", .string("correct horse battery"))])))
        return try await HTTPRequest.send(
            port: port,
            "POST /api/auth/password/sign-up HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
    }

    @Test func failedMessagesAreListedAndQueuedAgainAndATestMessageIsSent() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let smtp = try await AiosmtpdServer(user: Self.user, password: Self.password)
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let environment = ServerProcess.environment(simulator: simulator, Self.settings(smtp))
        let server = try ServerProcess(["serve"], environment: environment, folder: folder)
        let port = try #require(await server.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)
        func command(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
            try await ServerProcess.run(["email"] + arguments, environment: environment, folder: folder)
        }

        #expect(try await Self.signUp(port: port, "refuse-550@example.com").hasPrefix("HTTP/1.1 201"))
        #expect(try await WebhookCommandTests.metric(port, #"siwa_email_deliveries_total{kind="verify_email",outcome="failed"} 1"#))
        #expect(try await WebhookCommandTests.metric(port, "siwa_email_queue_depth 0\n"), "a failed message is not waiting")
        let listed = try await command(["failed"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let firstRow: Substring? = listed.stdout.split(separator: "\n").dropFirst().first
        let id = try #require(firstRow?.split(separator: " ").first.map(String.init))
        #expect(id.hasPrefix("mail_"))
        #expect(listed.stdout.contains("verify_email") && listed.stdout.contains("refuse-550@example.com") && listed.stdout.contains("550"))
        #expect(listed.stdout.contains("1 failed message(s)"))

        #expect(try await command(["retry", "mail_unknown"]).status == 1)
        #expect(try await command(["retry"]).status == 64)
        let one = try await command(["retry", id])
        #expect(one.status == 0 && one.stdout.contains("queued \(id) again"))
        // Refused for good again at once.
        #expect(try await WebhookCommandTests.metric(port, #"siwa_email_deliveries_total{kind="verify_email",outcome="failed"} 2"#))
        let all = try await command(["retry", "--all"])
        #expect(all.status == 0 && all.stdout.contains("queued 1 failed message(s) again"))

        let sent = try await command(["test", "--to", "ada@example.com"])
        #expect(sent.status == 0, "\(sent.stdout)\(sent.stderr)")
        #expect(sent.stdout.contains("sent: the SMTP server answered 250"))
        let arrived = try await smtp.message(1)
        #expect(arrived["rcpt_tos"] as? [String] == ["ada@example.com"])
        #expect(arrived["tls"] as? Bool == true && arrived["authenticated"] as? Bool == true)
        let refused = try await command(["test", "--to", "refuse-550@example.com"])
        #expect(refused.status == 1 && refused.stderr.contains("550"))
        for output in [listed, one, all, sent, refused].map({ $0.stdout + $0.stderr }) + [server.stdoutText, server.stderrText] {
            #expect(!output.contains(Self.password))
        }

        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 30) == 0)
        await simulator.stop()
    }

    /// docs/RELIABILITY.md: a kill -9 at any moment loses nothing committed. The sign-up's message is
    /// committed and its first attempt failed (nobody listened); the process dies during the
    /// back-off, and the next one, on the same database, delivers it.
    @Test func aMessageCommittedBeforeKillNineIsDeliveredAfterARestart() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let smtp = try await AiosmtpdServer(user: Self.user, password: Self.password)
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Nobody listens on port 1, which no test binds (a port found free may be another test's
        // by the time the first attempt connects: the suite runs all at once).
        let first = try ServerProcess(
            ["serve"], environment: ServerProcess.environment(simulator: simulator, Self.settings(smtp, port: 1)), folder: folder)
        let firstPort = try #require(await first.waitForPort())
        try await ServerProcess.waitUntilReady(port: firstPort)
        #expect(try await Self.signUp(port: firstPort, "ada@example.com").hasPrefix("HTTP/1.1 201"))
        #expect(try await WebhookCommandTests.metric(firstPort, #"siwa_email_deliveries_total{kind="verify_email",outcome="retry"} 1"#))
        first.signal(SIGKILL)
        #expect(await first.wait(seconds: 30) == 128 + SIGKILL)
        #expect(smtp.hasMessage(1) == false)

        let second = try ServerProcess(["serve"], environment: ServerProcess.environment(simulator: simulator, Self.settings(smtp)), folder: folder)
        let arrived = try await smtp.message(1)
        #expect(arrived["rcpt_tos"] as? [String] == ["ada@example.com"])
        let text = (arrived["parts"] as? [[String: Any]])?.first?["content"] as? String ?? ""
        #expect(text.contains("http://localhost:8080/verify-email?code="))
        second.signal(SIGTERM)
        #expect(await second.wait(seconds: 30) == 0)
        await simulator.stop()
    }

    @Test func theSettingsAreCheckedAndThePasswordIsNeverShown() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let smtp = try await AiosmtpdServer(user: Self.user, password: Self.password)
        let good = ServerProcess.environment(simulator: simulator, Self.settings(smtp))

        let checked = try await ServerProcess.run(["check-config"], environment: good)
        #expect(checked.stdout.contains("smtp_url") && checked.stdout.contains(":***@127.0.0.1:\(smtp.port)"), "\(checked.stdout)")

        var badScheme = good
        badScheme["SIWA_SMTP_URL"] = "https://\(Self.user):\(Self.password)@mail.example.com"
        let refused = try await ServerProcess.run(["serve"], environment: badScheme)
        #expect(refused.status == 2 && refused.stderr.contains("smtp_url: must start with smtp:// or smtps://"), "\(refused.stderr)")
        var noSender = good
        noSender["SIWA_EMAIL_FROM"] = nil
        let unsent = try await ServerProcess.run(["serve"], environment: noSender)
        #expect(unsent.status == 2 && unsent.stderr.contains("email_from: is required with smtp_url"), "\(unsent.stderr)")
        var noSMTP = good
        noSMTP["SIWA_SMTP_URL"] = nil
        let untested = try await ServerProcess.run(["email", "test", "--to", "ada@example.com"], environment: noSMTP)
        #expect(untested.status == 2 && untested.stderr.contains("smtp_url"))

        let doctor = try await ServerProcess.run(["doctor"], environment: good)
        #expect(doctor.stdout.contains("ok   SMTP smtp://"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("register siwa.example.com (email_from's domain) with Apple"))
        #expect(smtp.hasMessage(1) == false, "doctor sends nothing")
        let wrong = try await ServerProcess.run(["doctor"], environment: ServerProcess.environment(simulator: simulator, Self.settings(smtp, password: "wrong-Hush-9")))
        #expect(wrong.status == 1 && wrong.stdout.contains("FAIL SMTP smtp://") && wrong.stdout.contains("check smtp_url (user and password)"), "\(wrong.stdout)")
        for output in [checked, refused, unsent, untested, doctor, wrong].map({ $0.stdout + $0.stderr }) {
            #expect(!output.contains(Self.password) && !output.contains("wrong-Hush-9"))
        }
        await simulator.stop()
    }
}
