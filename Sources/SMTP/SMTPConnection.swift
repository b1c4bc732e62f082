import Glibc
import TLS
import WireFormat

/// One connection's conversation with the SMTP server (RFC 5321), blocking: `open` connects and
/// goes through the greeting, `EHLO`, `STARTTLS` (then `EHLO` again) and `AUTH`; then any number
/// of mail transactions, each but the first after `RSET`; then `QUIT`. Every step has its own
/// deadline. Used by one thread at a time.
final class SMTPConnection {
    private let transport: SMTPTransport
    private let stepTimeout: Duration
    /// What a server's reply might echo of the credentials; scrubbed from error texts.
    private let secrets: [String]
    private(set) var capabilities = SMTPCapabilities()
    /// False once the connection cannot carry another command: a transport failure, a
    /// malformed reply, a 421 (the server is closing it), or `QUIT`.
    private(set) var isUsable = true
    /// Whether a transaction (`MAIL FROM`) was started since the connection was opened.
    private(set) var hasStartedTransaction = false

    private init(transport: SMTPTransport, stepTimeout: Duration, credentials: SMTPCredentials?) {
        self.transport = transport
        self.stepTimeout = stepTimeout
        secrets = credentials.map { credentials in
            [
                credentials.password,
                Base64.standard.encode(credentials.password),
                Base64.standard.encode(Self.plainResponse(credentials)),
            ]
        } ?? []
    }

    /// Connects and gets the connection ready for mail: greeted, encrypted unless the host is
    /// loopback and offers no `STARTTLS`, logged in when the URL has credentials.
    static func open(configuration: SMTPConfiguration, tlsContext: TLSClientContext) throws(SMTPError) -> SMTPConnection {
        let url = configuration.url
        let fd: Int32
        do throws(SocketConnector.Failure) {
            // A loopback host may end up in plain text: then every address must be loopback,
            // whatever the resolver says `localhost` is.
            let loopbackOnly = url.security == .startTLS && url.isLoopback
            fd = try SocketConnector.connect(host: url.host, port: url.port, loopbackOnly: loopbackOnly, until: .after(configuration.stepTimeout))
        } catch {
            let cause: SMTPError.Cause = switch error {
            case .timedOut: .timedOut
            case .notLoopback: .connectFailed("\(url.host) resolves to no loopback address")
            case .failed(let reason): .connectFailed(reason)
            }
            throw SMTPError(step: .connect, cause: cause)
        }
        let connection = SMTPConnection(transport: SMTPTransport(fd: fd), stepTimeout: configuration.stepTimeout, credentials: url.credentials)
        try connection.start(url: url, tlsContext: tlsContext, clientName: configuration.clientName)
        return connection
    }

    private func start(url: SMTPURL, tlsContext: TLSClientContext, clientName: String?) throws(SMTPError) {
        if url.security == .implicitTLS {
            try handshake(context: tlsContext, hostName: url.host)
        }
        _ = try exchange(nil, step: .greeting, accepting: [220])
        let name = clientName ?? EHLOName.default(localAddress: transport.localAddress)
        try hello(name)
        if !transport.isEncrypted {
            if capabilities.startTLS {
                _ = try command("STARTTLS", step: .startTLS, accepting: [220])
                try handshake(context: tlsContext, hostName: url.host)
                // What the server said before TLS may have been forged (RFC 3207 §4.2).
                try hello(name)
            } else if !url.isLoopback {
                isUsable = false
                throw SMTPError(
                    step: .startTLS, cause: .refused("the server does not offer STARTTLS; plain SMTP is allowed only to a loopback host"))
            }
        }
        if let credentials = url.credentials {
            try authenticate(credentials)
        }
    }

    private func hello(_ name: String) throws(SMTPError) {
        capabilities = SMTPCapabilities(ehloReply: try command("EHLO \(name)", step: .ehlo, accepting: [250]))
    }

    private func handshake(context: TLSClientContext, hostName: String) throws(SMTPError) {
        do throws(SMTPTransport.Failure) {
            try transport.startTLS(context: context, hostName: hostName, until: .after(stepTimeout))
        } catch {
            isUsable = false
            throw SMTPError(step: .tlsHandshake, cause: Self.cause(error))
        }
    }

    /// `AUTH PLAIN` when offered (one round trip), else `AUTH LOGIN`; only ever over TLS.
    private func authenticate(_ credentials: SMTPCredentials) throws(SMTPError) {
        guard transport.isEncrypted else {
            isUsable = false
            throw SMTPError(step: .authentication, cause: .refused("the password is never sent without TLS"))
        }
        if capabilities.authMechanisms.contains("PLAIN") {
            _ = try command("AUTH PLAIN \(Base64.standard.encode(Self.plainResponse(credentials)))", step: .authentication, accepting: [235])
        } else if capabilities.authMechanisms.contains("LOGIN") {
            // The server's prompts (base64 "Username:", "Password:") are not checked: servers
            // word them differently, and the order is fixed (draft-murchison-sasl-login §2).
            _ = try command("AUTH LOGIN", step: .authentication, accepting: [334])
            _ = try command(Base64.standard.encode(credentials.user), step: .authentication, accepting: [334])
            _ = try command(Base64.standard.encode(credentials.password), step: .authentication, accepting: [235])
        } else {
            isUsable = false
            throw SMTPError(step: .authentication, cause: .refused("the server offers neither AUTH PLAIN nor AUTH LOGIN"))
        }
    }

    /// RFC 4616 §2: no authorization identity, NUL, user, NUL, password.
    private static func plainResponse(_ credentials: SMTPCredentials) -> [UInt8] {
        [0] + Array(credentials.user.utf8) + [0] + Array(credentials.password.utf8)
    }

    // MARK: Mail

    /// One mail transaction; the answer to the final `.`. A recipient refused fails the whole
    /// transaction (the caller sends `RSET` before the next one).
    func send(from: MailAddress, to recipients: [MailAddress], data: [UInt8]) throws(SMTPError) -> SMTPReply {
        guard !recipients.isEmpty else { throw SMTPError(step: .recipient, cause: .invalidInput("no recipient")) }
        guard let payload = SMTPDataEncoder.encode(data) else {
            throw SMTPError(step: .data, cause: .invalidInput("a line is longer than \(SMTPDataEncoder.maxLineBytes) octets"))
        }
        hasStartedTransaction = true
        _ = try command("MAIL FROM:<\(from.address)>", step: .mailFrom, accepting: [250])
        for recipient in recipients {
            // 251: "not local; will forward" (RFC 5321 §3.4) is an acceptance too.
            _ = try command("RCPT TO:<\(recipient.address)>", step: .recipient, recipient: recipient.address, accepting: [250, 251])
        }
        _ = try command("DATA", step: .data, accepting: [354])
        return try exchange(payload, step: .endOfData, accepting: [250])
    }

    /// Ends any transaction under way, so the next starts clean; fails when the server closed
    /// the connection while it sat idle.
    func reset() throws(SMTPError) {
        _ = try command("RSET", step: .reset, accepting: [250])
    }

    /// Says goodbye (best effort: whatever the answer, the connection is done).
    func quit() {
        if isUsable { _ = try? command("QUIT", step: .quit, accepting: [221]) }
        isUsable = false
    }

    // MARK: Exchanges

    private func command(_ line: String, step: SMTPError.Step, recipient: String? = nil, accepting codes: Set<Int>) throws(SMTPError) -> SMTPReply {
        try exchange(Array("\(line)\r\n".utf8), step: step, recipient: recipient, accepting: codes)
    }

    /// Sends `bytes` (if any) and reads the reply, within one step's time.
    private func exchange(_ bytes: [UInt8]?, step: SMTPError.Step, recipient: String? = nil, accepting codes: Set<Int>) throws(SMTPError) -> SMTPReply {
        let deadline = Deadline.after(stepTimeout)
        let reply: SMTPReply
        do throws(SMTPTransport.Failure) {
            if let bytes { try transport.send(bytes, until: deadline) }
            reply = try transport.readReply(until: deadline)
        } catch {
            isUsable = false
            throw SMTPError(step: step, cause: Self.cause(error), recipient: recipient)
        }
        // 421: the server is closing the connection (RFC 5321 §3.8).
        if reply.code == 421 { isUsable = false }
        guard codes.contains(reply.code) else {
            throw SMTPError(step: step, cause: .reply(code: reply.code, text: shown(reply.text)), recipient: recipient)
        }
        return reply
    }

    /// A server's text as an error may carry it: no control characters, no credentials (a
    /// server could echo what it was sent), at most 300 characters.
    private func shown(_ text: String) -> String {
        var scrubbed = text
        for secret in secrets where !secret.isEmpty {
            scrubbed = scrubbed.replacing(secret, with: "***")
        }
        let printable = PrintableText.oneLine(scrubbed)
        return printable.count > 300 ? String(printable.prefix(300)) + "…" : printable
    }

    private static func cause(_ failure: SMTPTransport.Failure) -> SMTPError.Cause {
        switch failure {
        case .timedOut: .timedOut
        case .closed: .connectionClosed
        case .tls(let reason): .tls(reason)
        case .malformed(let problem): .malformedReply(problem.description)
        case .bytesBeforeHandshake: .malformedReply("the server sent more after its answer to STARTTLS")
        }
    }
}
