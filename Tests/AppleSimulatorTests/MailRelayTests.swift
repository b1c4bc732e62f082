import AppleSimulator
import Glibc
import HTTPClient
import JSON
import SMTP
import TestSupport
import Testing

/// The simulator as Private Email Relay and everyone's mailbox (issue 20): over real sockets,
/// with siwa-server's own `SMTPClient` on the other side where it can be.
@Suite struct MailRelayTests {
    static let clientID = "com.example.app"

    /// A person who signed in to `clientID` with Hide My Email: their `sub`, relay address and
    /// own address.
    static func hiddenEmailPerson(_ harness: SimulatorHarness, appleID: String = "ada@example.org") throws -> (sub: String, relay: String) {
        let sub = harness.simulator.subject(forAppleID: appleID)
        let relay = try #require(harness.simulator.relayEmail(sub: sub))
        harness.simulator.recordAuthorization(sub: sub, clientID: clientID, email: relay, isPrivateEmail: true)
        return (sub, relay)
    }

    static func smtpClient(_ harness: SimulatorHarness) throws -> SMTPClient {
        try SMTPClient(configuration: SMTPConfiguration(url: SMTPURL("smtp://127.0.0.1:\(harness.simulator.smtpPort)")))
    }

    static func message(to address: String, from sender: String = "no-reply@example.com", subject: String = "Hello") throws -> MailMessage {
        try MailMessage(
            from: MailAddress(sender, displayName: "Siwa Server"), to: [MailAddress(address)], subject: subject,
            text: "Hi.\n", html: "<p>Hi.</p>", messageID: "m-\(UInt32.random(in: 0...UInt32.max))@example.com", date: 1_750_000_000)
    }

    static func mailbox(_ harness: SimulatorHarness, to address: String? = nil) async throws -> [JSONObject] {
        let query = address.map { "?to=" + $0 } ?? ""
        let response = try await harness.get("/sim/mailbox" + query)
        #expect(response.status == 200)
        return try #require(try response.jsonObject()["messages"]?.array).compactMap(\.object)
    }

    /// One whole transaction on a raw connection; the replies to RCPT TO and to the final dot.
    static func transaction(port: UInt16, from sender: String, to recipient: String, body: String = "Subject: raw\r\n\r\nhello\r\n")
        async throws -> (rcpt: SMTPLineClient.Reply, data: SMTPLineClient.Reply?)
    {
        try await onOwnThread {
            let client = try SMTPLineClient(port: port)
            #expect(try client.reply().code == 220)
            #expect(try client.command("EHLO test.example").code == 250)
            #expect(try client.command("MAIL FROM:<\(sender)>").code == 250)
            let rcpt = try client.command("RCPT TO:<\(recipient)>")
            guard rcpt.code == 250 else { return (rcpt, nil) }
            #expect(try client.command("DATA").code == 354)
            client.send(body + ".\r\n")
            let data = try client.reply()
            #expect(try client.command("QUIT").code == 221)
            return (rcpt, data)
        }
    }

    @Test func aMessageToAPlainAddressLandsDecodedWithItsLinks() async throws {
        try await withSimulator(mail: SimulatorMailSettings()) { harness in
            let link = "http://localhost:8080/verify-email?code=Zm9v-YmFy_baz"
            let text = "안녕하세요, Ada.\n.A line that starts with a dot.\nVerify your email: \(link).\nThanks"
            let subject = "이메일 주소를 확인하세요 <script>"
            let message = try MailMessage(
                from: MailAddress("no-reply@example.com", displayName: "김 서버"), to: [MailAddress("ada@example.org")], subject: subject,
                text: text, html: "<p>Verify: <a href=\"\(link)\">here</a></p>", messageID: "abc.1@example.com", date: 1_750_000_000)
            let client = try Self.smtpClient(harness)
            let reply = try await client.send(message)
            await client.close()
            #expect(reply.code == 250)

            let messages = try await Self.mailbox(harness, to: "ADA@example.org")
            try #require(messages.count == 1)
            let received = messages[0]
            #expect(received["subject"]?.string == subject)
            #expect(received["from"]?.string == "김 서버 <no-reply@example.com>")
            #expect(received["to"]?.array == [.string("ada@example.org")])
            #expect(received["text"]?.string == text)
            #expect(received["html"]?.string == "<p>Verify: <a href=\"\(link)\">here</a></p>")
            #expect(received["links"]?.array == [.string(link)])
            #expect(received["message_id"]?.string == "<abc.1@example.com>")
            #expect(received["envelope"]?.object?["mail_from"]?.string == "no-reply@example.com")
            #expect(received["relayed"]?.array == [])
            #expect(try await Self.mailbox(harness, to: "someone.else@example.org").isEmpty)

            // The page shows it escaped, with the link clickable.
            let page = try await harness.get("/mailbox?to=ada@example.org")
            #expect(page.status == 200)
            #expect(page.text.contains("이메일 주소를 확인하세요 &lt;script&gt;"))
            #expect(!page.text.contains("<script>"))
            #expect(page.text.contains("<a href=\"\(link)\">\(link)</a>"))
            #expect(page.headers.contains { $0.0.lowercased() == "content-security-policy" && $0.1.contains("script-src 'none'") })
        }
    }

    /// Korean text goes base64, a long link is cut by quoted-printable soft breaks, a long
    /// Korean subject is several encoded-words: all read back as sent.
    @Test func base64PartsSoftBreaksAndLongEncodedSubjectsDecode() async throws {
        try await withSimulator(mail: SimulatorMailSettings()) { harness in
            let longLink = "https://accounts.example.com/reset-password?code=" + String(repeating: "AbC-_9", count: 20)
            let korean = "비밀번호를 재설정하려면 아래 링크를 누르세요.\n" + longLink + "\n이 요청을 하지 않았다면 무시하세요."
            let english = "Reset your password here:\n" + longLink + "\nIf you did not ask, ignore this."
            let subject = "비밀번호 재설정 요청 — 계정 보안을 위해 한 시간 안에 완료해 주세요"
            let client = try Self.smtpClient(harness)
            for (text, to) in [(korean, "ko@example.org"), (english, "en@example.org")] {
                let message = try MailMessage(
                    from: MailAddress("no-reply@example.com"), to: [MailAddress(to)], subject: subject, text: text, html: "<p>\(text)</p>",
                    messageID: "r.\(to)", date: 1_750_000_000)
                #expect(try await client.send(message).code == 250)
            }
            await client.close()
            for (text, to) in [(korean, "ko@example.org"), (english, "en@example.org")] {
                let received = try #require(harness.simulator.mailbox(to: to).first)
                #expect(received.subject == subject)
                #expect(received.text == text)
                #expect(received.html == "<p>\(text)</p>")
                #expect(received.links == [longLink])
            }
        }
    }

    @Test func relayAddressIsForwardedWhenTheDomainIsRegisteredAndForwardingIsOn() async throws {
        try await withSimulator(mail: SimulatorMailSettings(), relayDomains: ["Example.COM"]) { harness in
            let (_, relay) = try Self.hiddenEmailPerson(harness)
            let client = try Self.smtpClient(harness)
            let reply = try await client.send(try Self.message(to: relay, from: "no-reply@example.com", subject: "Relayed"))
            await client.close()
            #expect(reply.code == 250)

            let messages = try await Self.mailbox(harness, to: "ada@example.org")
            try #require(messages.count == 1)
            #expect(messages[0]["subject"]?.string == "Relayed")
            #expect(messages[0]["to"]?.array == [.string("ada@example.org")])
            #expect(messages[0]["header_to"]?.string == relay)
            #expect(messages[0]["envelope"]?.object?["rcpt_to"]?.array == [.string(relay)])
            #expect(messages[0]["relayed"]?.array?.first?.object?["relay_address"]?.string == relay)
            #expect(harness.simulator.mailbox(to: relay).count == 1, "found by the relay address too")
        }
    }

    @Test func anUnregisteredSenderDomainIsRefusedAtRCPT() async throws {
        try await withSimulator(mail: SimulatorMailSettings(), relayDomains: ["example.com"]) { harness in
            let (_, relay) = try Self.hiddenEmailPerson(harness)
            // siwa-server's client sees a permanent failure at RCPT TO, which fails a message at once.
            let client = try Self.smtpClient(harness)
            let refused = try Self.message(to: relay, from: "no-reply@mail.example.net")
            do {
                _ = try await client.send(refused)
                Issue.record("the relay accepted mail from an unregistered domain")
            } catch let error as SMTPError {
                #expect(error.step == .recipient)
                #expect(error.replyCode == 550)
                #expect(error.isPermanent)
                #expect("\(error)".contains("mail.example.net is not registered"))
            } catch {
                Issue.record("not an SMTP error: \(error)")
            }
            await client.close()
            // A subdomain of a registered domain is another domain; a bounce has none.
            let subdomain = try await Self.transaction(port: harness.simulator.smtpPort, from: "x@news.example.com", to: relay)
            #expect(subdomain.rcpt.code == 550)
            let bounce = try await Self.transaction(port: harness.simulator.smtpPort, from: "", to: relay)
            #expect(bounce.rcpt.code == 550)
            #expect(bounce.rcpt.text.contains("without a domain is not registered"))
            // An address at the relay's domain that it never issued is unknown.
            let unknown = try await Self.transaction(port: harness.simulator.smtpPort, from: "a@example.com", to: "nobody123@private.icloud.com")
            #expect(unknown.rcpt.code == 550)
            #expect(unknown.rcpt.text.contains("no such relay address"))
            #expect(harness.simulator.mailbox().isEmpty)
        }
    }

    @Test func forwardingOffIsRefusedAtRCPTAndOnAgainIsAccepted() async throws {
        try await withSimulator(mail: SimulatorMailSettings(), relayDomains: ["example.com"]) { harness in
            let (sub, relay) = try Self.hiddenEmailPerson(harness)
            let port = harness.simulator.smtpPort
            // The person turns forwarding off in Settings; Apple tells the app (the receiver
            // here answers 404, which changes nothing: the setting changed first).
            let notified = try await harness.postJSON("/sim/notify", [
                ("url", .string(harness.baseURL + "/nowhere")), ("type", .string("email-disabled")), ("sub", .string(sub)),
                ("client_id", .string(Self.clientID)),
            ])
            #expect(notified.status == 200)
            let off = try await Self.transaction(port: port, from: "no-reply@example.com", to: relay)
            #expect(off.rcpt.code == 550)
            #expect(off.rcpt.text.contains("turned email forwarding off for \(Self.clientID)"))
            #expect(harness.simulator.mailbox().isEmpty)

            let on = try await harness.postJSON("/sim/relay/forwarding", [
                ("sub", .string(sub)), ("client_id", .string(Self.clientID)), ("enabled", .bool(true)),
            ])
            #expect(on.status == 200)
            #expect(try on.jsonObject()["email_forwarding"] == .bool(true))
            let accepted = try await Self.transaction(port: port, from: "no-reply@example.com", to: relay)
            #expect(accepted.rcpt.code == 250)
            #expect(accepted.data?.code == 250)
            #expect(harness.simulator.mailbox(to: "ada@example.org").count == 1)

            let unknown = try await harness.postJSON("/sim/relay/forwarding", [
                ("sub", .string(sub)), ("client_id", .string("com.example.other")), ("enabled", .bool(false)),
            ])
            #expect(unknown.status == 400)
        }
    }

    @Test func registeringRelayDomainsRefusesBadInputAndChangesNothing() async throws {
        try await withSimulator(mail: SimulatorMailSettings(), relayDomains: ["example.com"]) { harness in
            let before = try await harness.get("/sim/relay/domains").text
            #expect(before == #"{"teams":[{"team_id":"SIMTEAM001","domains":["example.com"]}]}"#)
            let bad: [[(String, JSONValue)]] = [
                [("domains", .array([.string("mail.example.net"), .string("not a domain")]))],
                [("domains", .array([.string("-bad.example")]))],
                [("domains", .array([.string("ok.example"), .integer(3)]))],
                [("domains", .string("ok.example"))],
                [("domains", .array([]))],
                [],
                [("team_id", .string("TEAMZ00000")), ("domains", .array([.string("ok.example")]))],
                [("team_id", .integer(1)), ("domain", .string("ok.example"))],
                [("domain", .string("a..example"))],
            ]
            for body in bad {
                let response = try await harness.postJSON("/sim/relay/domains", body)
                #expect(response.status == 400, "\(body)")
                #expect(response.errorCode == "invalid_request")
            }
            let notJSON = try await harness.post("/sim/relay/domains", contentType: "application/json", body: "[")
            #expect(notJSON.status == 400)
            #expect(try await harness.get("/sim/relay/domains").text == before)

            let added = try await harness.postJSON("/sim/relay/domains", [
                ("team_id", .string("SIMTEAM001")), ("domains", .array([.string("Mail.Example.NET"), .string("example.com")])),
            ])
            #expect(added.status == 200)
            #expect(try added.jsonObject()["domains"]?.array == [.string("example.com"), .string("mail.example.net")])
        }
    }

    @Test func messagesOverTheSizeLimitAreRefusedAndTheSessionGoesOn() async throws {
        var settings = SimulatorMailSettings()
        settings.maxMessageBytes = 1000
        try await withSimulator(mail: settings) { harness in
            let port = harness.simulator.smtpPort
            try await onOwnThread {
                let client = try SMTPLineClient(port: port)
                #expect(try client.reply().code == 220)
                let ehlo = try client.command("EHLO test.example")
                #expect(ehlo.code == 250)
                #expect(ehlo.text.contains("SIZE 1000"))
                // Announced too large: refused before any data.
                #expect(try client.command("MAIL FROM:<a@example.com> SIZE=5000").code == 552)
                #expect(try client.command("MAIL FROM:<a@example.com>").code == 250)
                #expect(try client.command("RCPT TO:<b@example.org>").code == 250)
                #expect(try client.command("DATA").code == 354)
                client.send("Subject: big\r\n\r\n" + String(repeating: String(repeating: "x", count: 99) + "\r\n", count: 20) + ".\r\n")
                #expect(try client.reply().code == 552)
                // A line over 998 octets is refused too, even in a small message.
                #expect(try client.command("MAIL FROM:<a@example.com>").code == 250)
                #expect(try client.command("RCPT TO:<b@example.org>").code == 250)
                #expect(try client.command("DATA").code == 354)
                client.send("Subject: long line\r\n\r\n" + String(repeating: "y", count: 5000) + "\r\n.\r\n")
                #expect(try client.reply().code == 500)
                // A command line far too long is refused without closing the session.
                #expect(try client.command("NOOP " + String(repeating: "z", count: 100_000)).code == 500)
                // The session still works: a small message goes through.
                #expect(try client.command("MAIL FROM:<a@example.com>").code == 250)
                #expect(try client.command("RCPT TO:<b@example.org>").code == 250)
                #expect(try client.command("DATA").code == 354)
                client.send("Subject: small\r\n\r\n..dot\r\n.\r\n")
                #expect(try client.reply().code == 250)
                #expect(try client.command("QUIT").code == 221)
            }
            let messages = harness.simulator.mailbox()
            #expect(messages.map(\.subject) == ["small"])
            #expect(messages.first?.text == ".dot\n", "dot-unstuffed")
        }
    }

    @Test func commandsOutOfOrderAreRefusedAndRSETStartsOver() async throws {
        try await withSimulator(mail: SimulatorMailSettings()) { harness in
            let port = harness.simulator.smtpPort
            try await onOwnThread {
                let client = try SMTPLineClient(port: port)
                #expect(try client.reply().code == 220)
                #expect(try client.command("MAIL FROM:<a@example.com>").code == 503)
                #expect(try client.command("HELO test.example").code == 250)
                #expect(try client.command("RCPT TO:<b@example.org>").code == 503)
                #expect(try client.command("DATA").code == 503)
                #expect(try client.command("MAIL FROM:<a@example.com>").code == 250)
                #expect(try client.command("RCPT TO:<not-an-address>").code == 553)
                #expect(try client.command("RCPT TO:<b@example.org>").code == 250)
                #expect(try client.command("RSET").code == 250)
                #expect(try client.command("DATA").code == 503)
                #expect(try client.command("NOOP").code == 250)
                #expect(try client.command("STARTTLS").code == 502)
                // What the client names itself is echoed without its control characters.
                let ehlo = try client.command("EHLO odd\rname")
                #expect(ehlo.code == 250)
                #expect(ehlo.text.hasPrefix("apple-sim.localhost greets odd name\n"))
                #expect(try client.command("QUIT").code == 221)
                #expect(client.readsEndOfStream())
            }
            #expect(harness.simulator.mailbox().isEmpty)
        }
    }

    @Test func aClientThatNeverFinishesBlocksNoOneAndIsDropped() async throws {
        var settings = SimulatorMailSettings()
        settings.commandTimeout = .seconds(1)
        try await withSimulator(mail: settings) { harness in
            let port = harness.simulator.smtpPort
            // Halfway through a message, then silence.
            let stalled = try await onOwnThread { () -> SMTPLineClient in
                let client = try SMTPLineClient(port: port)
                #expect(try client.reply().code == 220)
                #expect(try client.command("EHLO stalled.example").code == 250)
                #expect(try client.command("MAIL FROM:<a@example.com>").code == 250)
                #expect(try client.command("RCPT TO:<b@example.org>").code == 250)
                #expect(try client.command("DATA").code == 354)
                client.send("Subject: never ends\r\n\r\nhalf a li")
                return client
            }
            // Another client is served meanwhile.
            let client = try Self.smtpClient(harness)
            let reply = try await client.send(try Self.message(to: "c@example.org", subject: "served"))
            await client.close()
            #expect(reply.code == 250)
            #expect(harness.simulator.mailbox().map(\.subject) == ["served"])
            // The stalled one is told and dropped once its line is late; its half message is not kept.
            let last = try await onOwnThread { try stalled.reply() }
            #expect(last.code == 421)
            #expect(try await onOwnThread { stalled.readsEndOfStream() })
            #expect(harness.simulator.mailbox().map(\.subject) == ["served"])
        }
    }

    @Test func connectionsBeyondTheLimitAreToldToComeBackLater() async throws {
        var settings = SimulatorMailSettings()
        settings.maxConnections = 1
        try await withSimulator(mail: settings) { harness in
            let port = harness.simulator.smtpPort
            try await onOwnThread {
                let first = try SMTPLineClient(port: port)
                #expect(try first.reply().code == 220)
                let second = try SMTPLineClient(port: port)
                #expect(try second.reply().code == 421)
                #expect(try first.command("QUIT").code == 221)
            }
        }
    }

    /// What the team registered and what the person turned off are Apple's state: a restart with
    /// a state directory keeps them (the mailbox is memory only).
    @Test func registeredDomainsAndForwardingSurviveARestart() async throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        var person = (sub: "", relay: "")
        try await withSimulator(stateDirectory: directory, mail: SimulatorMailSettings()) { harness in
            person = try Self.hiddenEmailPerson(harness)
            #expect(try await harness.postJSON("/sim/relay/domains", [("domain", .string("example.com"))]).status == 200)
            try harness.simulator.setEmailForwarding(sub: person.sub, clientID: Self.clientID, enabled: false)
        }
        try await withSimulator(stateDirectory: directory, mail: SimulatorMailSettings()) { harness in
            #expect(try await harness.get("/sim/relay/domains").text == #"{"teams":[{"team_id":"SIMTEAM001","domains":["example.com"]}]}"#)
            let off = try await Self.transaction(port: harness.simulator.smtpPort, from: "no-reply@example.com", to: person.relay)
            #expect(off.rcpt.text.contains("forwarding off"))
            try harness.simulator.setEmailForwarding(sub: person.sub, clientID: Self.clientID, enabled: true)
            let on = try await Self.transaction(port: harness.simulator.smtpPort, from: "no-reply@example.com", to: person.relay)
            #expect(on.data?.code == 250)
        }
    }

    @Test func theMailboxKeepsTheNewestMessages() async throws {
        var settings = SimulatorMailSettings()
        settings.mailboxCapacity = 2
        try await withSimulator(mail: settings) { harness in
            let client = try Self.smtpClient(harness)
            for index in 1...3 { _ = try await client.send(try Self.message(to: "d@example.org", subject: "n\(index)")) }
            await client.close()
            #expect(harness.simulator.mailbox().map(\.subject) == ["n2", "n3"])
            #expect(try await harness.delete("/sim/mailbox").status == 200)
            #expect(try await Self.mailbox(harness).isEmpty)
        }
    }
}
