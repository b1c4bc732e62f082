import Foundation
import Glibc
@testable import SMTP
import TLS
import Testing
import WireFormat

/// The client against `FakeSMTPServer` over real loopback sockets and real TLS.
@Suite(.timeLimit(.minutes(2))) struct SMTPClientTests {
    @Test func aMessageGoesOverSTARTTLSWithAuthPlain() async throws {
        let fixture = try SMTPSessionFixture()
        defer { fixture.server.stop() }
        let client = try fixture.client()
        let message = try SMTPSessionFixture.message()
        let reply = try await client.send(message)
        await client.close()

        #expect(reply.code == 250 && reply.text == "2.0.0 Ok: queued as FAKE0")
        let plain = Base64.standard.encode([0] + Array("mailer".utf8) + [0] + Array(SMTPSessionFixture.password.utf8))
        #expect(fixture.server.commands.map(\.line) == [
            "EHLO client.example", "STARTTLS", "EHLO client.example", "AUTH PLAIN \(plain)",
            "MAIL FROM:<noreply@siwa.example.com>", "RCPT TO:<kim@example.com>", "DATA", "QUIT",
        ])
        #expect(fixture.server.messages.map(unstuffed) == [message.rendered()])
        #expect(fixture.server.acceptedConnections == 1)
    }

    @Test func authLoginWhenPlainIsNotOffered() async throws {
        let fixture = try SMTPSessionFixture(extensions: ["STARTTLS", "AUTH LOGIN CRAM-MD5"])
        defer { fixture.server.stop() }
        try await fixture.client().send(SMTPSessionFixture.message())
        #expect(Array(fixture.server.commands.map(\.line)[3...5]) == [
            "AUTH LOGIN", Base64.standard.encode("mailer"), Base64.standard.encode(SMTPSessionFixture.password),
        ])
        #expect(fixture.server.verbs.suffix(3) == ["MAIL", "RCPT", "DATA"])
    }

    @Test func noUsableMechanismIsRefusedBeforeAnyPasswordIsSent() async throws {
        for extensions in [["STARTTLS", "AUTH CRAM-MD5 XOAUTH2"], ["STARTTLS"]] {
            let fixture = try SMTPSessionFixture(extensions: extensions)
            defer { fixture.server.stop() }
            let error = await smtpFailure { try await fixture.client().send(SMTPSessionFixture.message()) }
            #expect(error?.step == .authentication)
            #expect(error?.cause == .refused("the server offers neither AUTH PLAIN nor AUTH LOGIN"))
            #expect(fixture.server.verbs == ["EHLO", "STARTTLS", "EHLO"])
        }
    }

    @Test func smtpsSpeaksTLSFromTheFirstByte() async throws {
        let fixture = try SMTPSessionFixture(implicitTLS: true, extensions: ["AUTH PLAIN"])
        defer { fixture.server.stop() }
        try await fixture.client(fixture.url(scheme: "smtps")).send(SMTPSessionFixture.message())
        #expect(fixture.server.verbs == ["EHLO", "AUTH", "MAIL", "RCPT", "DATA"])
    }

    @Test func theHostNameIsCheckedToo() async throws {
        let fixture = try SMTPSessionFixture(implicitTLS: true, extensions: ["AUTH PLAIN"])
        defer { fixture.server.stop() }
        let error = await smtpFailure {
            try await fixture.client(fixture.url(scheme: "smtps", host: "localhost")).send(SMTPSessionFixture.message())
        }
        #expect(error == nil, "localhost is in the certificate: \(String(describing: error))")
    }

    @Test func theCertificateIsVerified() async throws {
        // Signed by another CA; naming another host; naming the host only in its CN.
        let stranger = try CertificateAuthority()
        let wrongName = try SMTPSessionFixture(dnsNames: ["mail.example.org"], ipAddresses: ["127.0.0.2"])
        let commonNameOnly = try SMTPSessionFixture()
        let cnLeaf = try commonNameOnly.authority.issueWithoutAlternativeNames(commonName: "localhost")
        let cnServer = try FakeSMTPServer(tls: TLSServerContext(cnLeaf))
        let trusted = try SMTPSessionFixture()
        defer { [wrongName.server, commonNameOnly.server, cnServer, trusted.server].forEach { $0.stop() } }

        let cases: [(SMTPClient, String)] = [
            (try trusted.client(trusting: stranger.certificatePEM), "certificate verify failed"),
            (try wrongName.client(), "certificate verify failed"),
            (try commonNameOnly.client(SMTPURL("smtp://mailer:\(SMTPSessionFixture.password)@localhost:\(cnServer.port)")), "certificate verify failed"),
        ]
        for (client, reason) in cases {
            let error = await smtpFailure { try await client.send(SMTPSessionFixture.message()) }
            #expect(error?.step == .tlsHandshake)
            guard case .tls(let text) = error?.cause else {
                Issue.record("expected a TLS failure, got \(String(describing: error))")
                continue
            }
            #expect(text.contains(reason), "\(text)")
            #expect(error?.isTransient == true)
        }
        // Nothing after STARTTLS went to any of them: no password, no message.
        for server in [trusted.server, wrongName.server, cnServer] {
            #expect(server.verbs == ["EHLO", "STARTTLS"])
        }
    }

    @Test func plainSMTPToLoopbackWithoutCredentials() async throws {
        let fixture = try SMTPSessionFixture(extensions: ["8BITMIME"])
        defer { fixture.server.stop() }
        try await fixture.client(fixture.url(credentials: false)).send(SMTPSessionFixture.message())
        #expect(fixture.server.verbs == ["EHLO", "MAIL", "RCPT", "DATA"])
    }

    @Test func credentialsAreNeverSentInTheClear() async throws {
        let fixture = try SMTPSessionFixture(extensions: ["AUTH PLAIN LOGIN"])
        defer { fixture.server.stop() }
        let error = await smtpFailure { try await fixture.client().send(SMTPSessionFixture.message()) }
        #expect(error?.step == .authentication)
        #expect(error?.cause == .refused("the password is never sent without TLS"))
        #expect(fixture.server.verbs == ["EHLO"])
    }

    @Test func aHostThatIsNotLoopbackMustOfferSTARTTLS() async throws {
        // `127.1` is 127.0.0.1 to the resolver, but not a loopback name to the URL: the client
        // takes it for a remote host, which must not get plain SMTP.
        let fixture = try SMTPSessionFixture(extensions: ["AUTH PLAIN"])
        defer { fixture.server.stop() }
        let url = try fixture.url(credentials: false, host: "127.1")
        #expect(!url.isLoopback)
        let error = await smtpFailure { try await fixture.client(url).send(SMTPSessionFixture.message()) }
        #expect(error?.step == .startTLS)
        #expect(error?.cause == .refused("the server does not offer STARTTLS; plain SMTP is allowed only to a loopback host"))
        #expect(error?.isTransient == true)
        #expect(fixture.server.verbs == ["EHLO"])
    }

    @Test func bytesInjectedBeforeTheHandshakeAreRefused() async throws {
        // CVE-2011-0411: a command or answer smuggled in the plain-text part must not be read
        // as if it came over TLS.
        let fixture = try SMTPSessionFixture { event, _ in
            event == .command("STARTTLS") ? .raw(Array("220 go ahead\r\n250 injected\r\n".utf8)) : nil
        }
        defer { fixture.server.stop() }
        let error = await smtpFailure { try await fixture.client().send(SMTPSessionFixture.message()) }
        #expect(error?.step == .tlsHandshake)
        #expect(error?.cause == .malformedReply("the server sent more after its answer to STARTTLS"))
    }

    /// A refusal at each step: the error names the step and code, and says permanent for 5xx.
    @Test(arguments: [
        ("connected", "554 5.3.2 No service", SMTPError.Step.greeting),
        ("EHLO", "550 5.7.1 Go away", .ehlo),
        ("STARTTLS", "454 4.7.0 TLS not available", .startTLS),
        ("AUTH", "535 5.7.8 Authentication credentials invalid", .authentication),
        ("MAIL", "451 4.3.0 Try later", .mailFrom),
        ("RCPT", "550 5.1.1 <kim@example.com>: Recipient address rejected: User unknown", .recipient),
        ("RCPT", "452 4.2.2 Mailbox full", .recipient),
        ("DATA", "554 5.5.1 No valid recipients", .data),
        ("message", "552 5.3.4 Message too big", .endOfData),
        ("message", "451 4.7.1 Greylisted", .endOfData),
    ])
    func aRefusalAtEachStep(trigger: String, answer: String, step: SMTPError.Step) async throws {
        let fixture = try SMTPSessionFixture { event, context in
            switch event {
            case .connected: trigger == "connected" ? .reply(answer) : nil
            case .message: trigger == "message" ? .reply(answer) : nil
            case .command(let line):
                line.uppercased().hasPrefix(trigger) && (trigger != "EHLO" || !context.isEncrypted) ? .reply(answer) : nil
            }
        }
        defer { fixture.server.stop() }
        let error = await smtpFailure { try await fixture.client().send(SMTPSessionFixture.message()) }
        let code = Int(answer.prefix(3))!
        #expect(error?.step == step)
        #expect(error?.replyCode == code)
        #expect(error?.cause == .reply(code: code, text: String(answer.dropFirst(4))))
        #expect(error?.isPermanent == (code >= 500))
        #expect(error?.recipient == (step == .recipient ? "kim@example.com" : nil))
        #expect(error?.description.contains(step.rawValue) == true)
        #expect(error?.description.contains(code >= 500 ? "(permanent)" : "(transient)") == true)
        #expect(error.map { !"\($0)".contains(SMTPSessionFixture.password) } == true)
    }

    @Test func aRecipientRefusedPermanentlyDoesNotSpoilTheConnection() async throws {
        let fixture = try SMTPSessionFixture { event, _ in
            event == .command("RCPT TO:<gone@example.com>") ? .reply("550 5.1.1 User unknown") : nil
        }
        defer { fixture.server.stop() }
        let client = try fixture.client()
        let gone = try MailMessage(
            from: MailAddress("noreply@siwa.example.com"), to: [MailAddress("gone@example.com")], subject: "x", text: "x", html: "x",
            messageID: "g@siwa.example.com", date: 0)
        let error = await smtpFailure { try await client.send(gone) }
        #expect(error?.step == .recipient && error?.isPermanent == true && error?.recipient == "gone@example.com")
        try await client.send(SMTPSessionFixture.message())
        #expect(fixture.server.acceptedConnections == 1)
        #expect(Array(fixture.server.verbs.dropFirst(4)) == ["MAIL", "RCPT", "RSET", "MAIL", "RCPT", "DATA"])
    }

    @Test func oneConnectionCarriesSeveralMessagesWithRSETBetween() async throws {
        let fixture = try SMTPSessionFixture()
        defer { fixture.server.stop() }
        let client = try fixture.client()
        for index in 0..<3 {
            try await client.send(SMTPSessionFixture.message(id: "m\(index)@siwa.example.com"))
        }
        await client.close()
        #expect(fixture.server.acceptedConnections == 1)
        #expect(Array(fixture.server.verbs.dropFirst(4)) == [
            "MAIL", "RCPT", "DATA", "RSET", "MAIL", "RCPT", "DATA", "RSET", "MAIL", "RCPT", "DATA", "QUIT",
        ])
        #expect(fixture.server.messages.count == 3)
        #expect(await client.connectionsOpened == 1)
    }

    @Test func aConnectionTheServerClosedIsReplacedTransparently() async throws {
        // The first connection is closed by the server after its message, as an idle timeout
        // would (with the 421 such servers send first); the second message still goes.
        let fixture = try SMTPSessionFixture { event, context in
            if context.connection == 0, case .message = event { return .reply("250 2.0.0 Ok") }
            if context.connection == 0, event == .command("RSET") { return .replyAndClose("421 4.4.2 Idle timeout, closing") }
            return nil
        }
        defer { fixture.server.stop() }
        let client = try fixture.client()
        try await client.send(SMTPSessionFixture.message(id: "a@siwa.example.com"))
        try await client.send(SMTPSessionFixture.message(id: "b@siwa.example.com"))
        #expect(fixture.server.acceptedConnections == 2)
        #expect(fixture.server.messages.count == 2)
        #expect(await client.connectionsOpened == 2)

        // A server that just went away (no 421, no answer at all) is replaced the same way.
        let silent = try SMTPSessionFixture { event, context in
            context.connection == 0 && event == .command("RSET") ? .close : nil
        }
        defer { silent.server.stop() }
        let other = try silent.client()
        try await other.send(SMTPSessionFixture.message(id: "c@siwa.example.com"))
        try await other.send(SMTPSessionFixture.message(id: "d@siwa.example.com"))
        #expect(silent.server.acceptedConnections == 2 && silent.server.messages.count == 2)
    }

    @Test func a421DropsTheConnectionAndTheNextMessageOpensANewOne() async throws {
        let fixture = try SMTPSessionFixture { event, context in
            context.connection == 0 && event == .command("MAIL FROM:<noreply@siwa.example.com>") ? .replyAndClose("421 4.3.2 Shutting down") : nil
        }
        defer { fixture.server.stop() }
        let client = try fixture.client()
        let error = await smtpFailure { try await client.send(SMTPSessionFixture.message()) }
        #expect(error?.step == .mailFrom && error?.replyCode == 421 && error?.isTransient == true)
        try await client.send(SMTPSessionFixture.message())
        #expect(fixture.server.acceptedConnections == 2)
        // No RSET on the dropped connection: the new one starts from EHLO.
        #expect(fixture.server.commands.filter { $0.connection == 1 }.map { String($0.line.prefix(4)) } == ["EHLO", "STAR", "EHLO", "AUTH", "MAIL", "RCPT", "DATA"])
    }

    @Test func aServerThatNeverAnswersTimesOutAtThatStep() async throws {
        // Plain SMTP on loopback: no handshake whose CPU time on a busy machine could
        // itself outlast a short step.
        for (trigger, step) in [("connected", SMTPError.Step.greeting), ("EHLO", .ehlo), ("message", .endOfData), ("RSET", .reset)] {
            let fixture = try SMTPSessionFixture(extensions: []) { event, context in
                switch event {
                case .connected: trigger == "connected" ? .stall : nil
                case .message: trigger == "message" ? .stall : nil
                case .command(let line): line.hasPrefix(trigger) && context.connection == 0 ? .stall : nil
                }
            }
            defer { fixture.server.stop() }
            let client = try fixture.client(fixture.url(credentials: false), stepTimeout: .seconds(1))
            let started = ContinuousClock.now
            if step == .reset {
                // An RSET that times out is a dead connection: a new one carries the message.
                try await client.send(SMTPSessionFixture.message())
                try await client.send(SMTPSessionFixture.message())
                #expect(fixture.server.acceptedConnections == 2)
                continue
            }
            let error = await smtpFailure { try await client.send(SMTPSessionFixture.message()) }
            let elapsed = ContinuousClock.now - started
            #expect(error?.step == step, "\(trigger)")
            #expect(error?.cause == .timedOut)
            #expect(error?.isTransient == true)
            // Bounded by the step's time, not hanging (loose: the machine is busy).
            #expect(elapsed >= .milliseconds(950) && elapsed < .seconds(30), "\(elapsed)")
        }
    }

    @Test func aRefusedConnectionFailsAtOnce() async throws {
        // A port nobody listens on: bind one, close it.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        close(fd)
        let port = UInt16(bigEndian: address.sin_port)

        let client = try SMTPClient(configuration: SMTPConfiguration(url: SMTPURL("smtp://127.0.0.1:\(port)")))
        let error = await smtpFailure { try await client.send(SMTPSessionFixture.message()) }
        #expect(error?.step == .connect)
        guard case .connectFailed(let reason) = error?.cause else {
            Issue.record("expected connectFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("127.0.0.1:\(port)") && reason.contains("refused"))
        #expect(error?.isTransient == true)
    }

    @Test func aServerThatHangsUpAtOnceIsAClosedConnection() async throws {
        let fixture = try SMTPSessionFixture { event, _ in event == .connected ? .close : nil }
        defer { fixture.server.stop() }
        let error = await smtpFailure { try await fixture.client().send(SMTPSessionFixture.message()) }
        #expect(error == SMTPError(step: .greeting, cause: .connectionClosed))
        #expect(error?.isTransient == true)
    }

    @Test func garbageFromTheServerIsAMalformedReply() async throws {
        let fixture = try SMTPSessionFixture { event, _ in event == .connected ? .raw(Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8)) : nil }
        defer { fixture.server.stop() }
        let error = await smtpFailure { try await fixture.client().send(SMTPSessionFixture.message()) }
        #expect(error == SMTPError(step: .greeting, cause: .malformedReply("a reply line does not start with a reply code")))
    }

    @Test func errorsNeverCarryThePasswordEvenWhenTheServerEchoesIt() async throws {
        // A server that repeats what it was sent, in every form the password travels in.
        for extensions in [["STARTTLS", "AUTH PLAIN"], ["STARTTLS", "AUTH LOGIN"]] {
            let fixture = try SMTPSessionFixture(extensions: extensions) { event, context in
                guard case .command(let line) = event, context.isEncrypted else { return nil }
                if line.hasPrefix("AUTH PLAIN ") || context.previous.last == Base64.standard.encode("mailer") {
                    return .reply("535-5.7.8 Bad credentials: \(line)\r\n535 5.7.8 (you sent \(SMTPSessionFixture.password))")
                }
                return nil
            }
            defer { fixture.server.stop() }
            let error = try #require(await smtpFailure { try await fixture.client().send(SMTPSessionFixture.message()) })
            let shown = "\(error) \(String(reflecting: error))"
            #expect(error.step == .authentication && error.replyCode == 535 && error.isPermanent)
            #expect(!shown.contains(SMTPSessionFixture.password))
            #expect(!shown.contains(Base64.standard.encode(SMTPSessionFixture.password)))
            #expect(!shown.contains(Base64.standard.encode([0] + Array("mailer".utf8) + [0] + Array(SMTPSessionFixture.password.utf8))))
            #expect(shown.contains("***"))
        }
    }

    @Test func theMessageNeverAppearsInAnError() async throws {
        let secretCode = "code-ZX81-very-secret"
        let fixture = try SMTPSessionFixture { event, _ in
            if case .message = event { return .reply("554 5.7.1 rejected") }
            return nil
        }
        defer { fixture.server.stop() }
        let error = try #require(await smtpFailure {
            try await fixture.client().send(SMTPSessionFixture.message(text: "Your code is \(secretCode)"))
        })
        #expect(!"\(error)".contains(secretCode) && !String(reflecting: error).contains(secretCode))
    }

    @Test func dotStuffingOnTheWire() async throws {
        let fixture = try SMTPSessionFixture(extensions: ["8BITMIME"])
        defer { fixture.server.stop() }
        let data = Array("Subject: dots\r\n\r\n.\r\n.hidden\nlast line without end".utf8)
        try await fixture.client(fixture.url(credentials: false)).send(
            from: MailAddress("a@example.com"), to: [MailAddress("b@example.com"), MailAddress("c@example.com")], data: data)
        let wire = try #require(fixture.server.messages.first)
        #expect(String(decoding: wire, as: UTF8.self) == "Subject: dots\r\n\r\n..\r\n..hidden\r\nlast line without end\r\n")
        #expect(fixture.server.verbs == ["EHLO", "MAIL", "RCPT", "RCPT", "DATA"])
    }

    @Test func aLineTooLongIsRefusedBeforeAnythingIsSent() async throws {
        let fixture = try SMTPSessionFixture(extensions: [])
        defer { fixture.server.stop() }
        let client = try fixture.client(fixture.url(credentials: false))
        let error = await smtpFailure {
            try await client.send(from: MailAddress("a@example.com"), to: [MailAddress("b@example.com")], data: Array(repeating: UInt8(ascii: "x"), count: 1000))
        }
        #expect(error?.step == .data && error?.isPermanent == true)
        #expect(!fixture.server.verbs.contains("MAIL"))
    }

    @Test func checkConnectionLogsInAndSendsNothing() async throws {
        let fixture = try SMTPSessionFixture()
        defer { fixture.server.stop() }
        try await fixture.client().checkConnection()
        #expect(fixture.server.verbs == ["EHLO", "STARTTLS", "EHLO", "AUTH", "QUIT"])
        #expect(fixture.server.messages.isEmpty)

        let refusing = try SMTPSessionFixture { event, _ in
            if case .command(let line) = event, line.hasPrefix("AUTH") { return .reply("535 5.7.8 Authentication failed") }
            return nil
        }
        defer { refusing.server.stop() }
        let error = await smtpFailure { try await refusing.client().checkConnection() }
        #expect(error?.step == .authentication && error?.replyCode == 535)
    }

    @Test func theEHLONameIsADomainOrAnAddressLiteral() async throws {
        let fixture = try SMTPSessionFixture(extensions: [])
        defer { fixture.server.stop() }
        try await fixture.client(fixture.url(credentials: false), clientName: nil).send(SMTPSessionFixture.message())
        let name = try #require(fixture.server.commands.first?.line.dropFirst(5))
        #expect(EHLOName.isValid(String(name)))
        #expect(name.contains(".") || name == "[127.0.0.1]", "\(name)")

        #expect(throws: SMTPError.self) { try fixture.client(clientName: "bad name\r\nMAIL FROM:<x@y>") }
        #expect(throws: SMTPError.self) { try fixture.client(clientName: "") }
    }

    @Test func anUnreadableCAFileFailsAtSetup() throws {
        let error = #expect(throws: SMTPError.self) {
            try SMTPClient(configuration: SMTPConfiguration(url: SMTPURL("smtp://127.0.0.1"), extraCAFile: "/nonexistent/ca.pem"))
        }
        #expect(error?.step == .setup)
    }
}
