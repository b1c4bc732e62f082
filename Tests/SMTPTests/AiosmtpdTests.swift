import Foundation
import SMTP
import TestSupport
import Testing
import WireFormat

/// The client against aiosmtpd, an independent SMTP server, with what arrived read back by
/// Python's `email` package. Skipped (loudly) without `.build-py`; under CI they always run,
/// so a missing aiosmtpd fails them.
@Suite(.enabled(if: PythonTools.testsEnabled), .timeLimit(.minutes(3))) struct AiosmtpdTests {
    private static let user = "mailer@siwa.example.com"
    private static let password = "p@ss:w/rd 비밀"

    private func client(_ server: AiosmtpdServer, host: String = "127.0.0.1", password: String = Self.password) throws -> SMTPClient {
        let url = try SMTPURL("smtp://\(FormURLEncoding.escape(Self.user)):\(FormURLEncoding.escape(password))@\(host):\(server.port)")
        return try SMTPClient(configuration: SMTPConfiguration(url: url, extraCAPEM: server.caPEM, trustOnlyExtraCAs: true))
    }

    private static func koreanMessage(id: String) throws -> MailMessage {
        try MailMessage(
            from: MailAddress("noreply@siwa.example.com", displayName: "시와 서버"),
            to: [MailAddress("kim@example.com", displayName: "김철수")],
            subject: "이메일 주소를 확인해 주세요 (Verify your email)",
            text: "Hello Kim,\n.\n.hidden line\nYour code: 123456\nhttps://siwa.example.com/verify-email?code=AbC-_9xyz\n",
            html: "<p>안녕하세요 김철수님,</p>\n<p>확인 코드: <b>123456</b></p>\n",
            messageID: id, date: 1_796_119_200)
    }

    @Test(arguments: [["PLAIN", "LOGIN"], ["LOGIN"]])
    func messagesArriveWhole(mechanisms: [String]) async throws {
        let server = try await AiosmtpdServer(user: Self.user, password: Self.password, mechanisms: mechanisms)
        let client = try client(server)
        let first = try Self.koreanMessage(id: "first.\(mechanisms.count)@siwa.example.com")
        let second = try Self.koreanMessage(id: "second.\(mechanisms.count)@siwa.example.com")
        let reply = try await client.send(first)
        #expect(reply.code == 250 && reply.text.contains("accepted"))
        // The same connection, after RSET.
        try await client.send(second)
        await client.close()

        for (number, message) in [(1, first), (2, second)] {
            let arrived = try await server.message(number)
            #expect(arrived["tls"] as? Bool == true)
            #expect(arrived["authenticated"] as? Bool == true)
            #expect(arrived["mail_from"] as? String == "noreply@siwa.example.com")
            #expect(arrived["rcpt_tos"] as? [String] == ["kim@example.com"])
            #expect(arrived["defects"] as? [String] == [], "\(arrived["defects"] ?? "")")
            #expect(arrived["from"] as? [[String: String]] == [["name": "시와 서버", "address": "noreply@siwa.example.com"]])
            #expect(arrived["to"] as? [[String: String]] == [["name": "김철수", "address": "kim@example.com"]])
            #expect(arrived["subject"] as? String == "이메일 주소를 확인해 주세요 (Verify your email)")
            #expect(arrived["date"] as? Int == 1_796_119_200)
            #expect(arrived["message_id"] as? String == "<\(message.messageID)>")
            #expect(arrived["mime_version"] as? String == "1.0")
            #expect(arrived["content_type"] as? String == "multipart/alternative")
            #expect(arrived["header_names"] as? [String] == ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"])

            let parts = try #require(arrived["parts"] as? [[String: Any]])
            #expect(parts.map { $0["type"] as? String } == ["text/plain", "text/html"])
            #expect(parts.map { $0["charset"] as? String } == ["utf-8", "utf-8"])
            #expect(parts.map { $0["encoding"] as? String } == ["quoted-printable", "base64"])
            let contents = parts.map { ($0["content"] as? String ?? "").replacing("\r\n", with: "\n") }
            #expect(contents == [message.text, message.html])

            // What the server stored, its dot-stuffing undone, is what was rendered: the
            // lines starting with `.` came through.
            let raw = try #require((arrived["raw"] as? String).flatMap { Base64.standard.decode($0) })
            #expect(raw == message.rendered())
        }
    }

    @Test func theCertificateNameMayBeTheDNSNameToo() async throws {
        let server = try await AiosmtpdServer(user: Self.user, password: Self.password)
        try await client(server, host: "localhost").checkConnection()
    }

    @Test func aWrongPasswordIsAPermanentAuthFailureThatDoesNotShowIt() async throws {
        let server = try await AiosmtpdServer(user: Self.user, password: Self.password)
        let wrong = "wrong-Password-42"
        do {
            try await client(server, password: wrong).send(Self.koreanMessage(id: "never@siwa.example.com"))
            Issue.record("a wrong password was accepted")
        } catch let error as SMTPError {
            #expect(error.step == .authentication && error.replyCode == 535 && error.isPermanent, "\(error)")
            #expect(!"\(error)".contains(wrong))
        }
    }
}
