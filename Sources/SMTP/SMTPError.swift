/// Why talking to the SMTP server failed: the step, what happened there, and whether trying
/// again later can help. Never holds the password (a server's reply to `AUTH` is scrubbed of
/// it) nor the message's content.
public struct SMTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the conversation was when it failed.
    public enum Step: String, Sendable {
        /// Before any connection: the TLS context (CA file), the worker thread.
        case setup
        /// Resolving the host and the TCP connect.
        case connect
        /// The server's 220 greeting.
        case greeting
        case ehlo = "EHLO"
        case startTLS = "STARTTLS"
        /// The TLS handshake, certificate and name checks included (after `STARTTLS`, or at
        /// once for `smtps://`).
        case tlsHandshake = "TLS handshake"
        case authentication = "AUTH"
        case mailFrom = "MAIL FROM"
        case recipient = "RCPT TO"
        case data = "DATA"
        /// The message and its final `.`: the server's answer says whether it took the message.
        case endOfData = "end of data"
        case reset = "RSET"
        case quit = "QUIT"
    }

    public enum Cause: Sendable, Equatable {
        /// The server answered with a code the step does not accept. The text is the reply's,
        /// without control characters, shortened, and scrubbed of credentials.
        case reply(code: Int, text: String)
        /// The step's time ran out.
        case timedOut
        /// No connection: the host did not resolve, or refused, or was unreachable.
        case connectFailed(String)
        /// The server closed the connection where an answer was expected.
        case connectionClosed
        /// TLS failed: the handshake (the certificate's chain or name), or a record later.
        case tls(String)
        /// The server's bytes are not SMTP replies.
        case malformedReply(String)
        /// The client will not go on: what the server offers would put the password or the
        /// message in the clear, or it offers no way to log in that the client knows.
        case refused(String)
        /// What was to be sent cannot be sent as it is (a line over 998 octets).
        case invalidInput(String)
    }

    public let step: Step
    public let cause: Cause
    /// The recipient refused, when `step` is `.recipient`.
    public let recipient: String?

    public init(step: Step, cause: Cause, recipient: String? = nil) {
        self.step = step
        self.cause = cause
        self.recipient = recipient
    }

    /// The reply code, when the server answered.
    public var replyCode: Int? {
        if case .reply(let code, _) = cause { return code }
        return nil
    }

    /// A 5xx answer (RFC 5321 §4.2.1), or input that can never be sent: the same message will
    /// fail the same way. A 5xx to `RCPT TO` means that recipient will not take it.
    public var isPermanent: Bool {
        switch cause {
        case .reply(let code, _): code >= 500
        case .invalidInput: true
        case .timedOut, .connectFailed, .connectionClosed, .tls, .malformedReply, .refused: false
        }
    }

    /// 4xx answers, time-outs, connection and TLS failures, refusals: trying again later may
    /// succeed.
    public var isTransient: Bool { !isPermanent }

    public var description: String {
        let stepName = recipient.map { "\(step.rawValue) <\($0)>" } ?? step.rawValue
        let what: String = switch cause {
        case .reply(let code, let text): text.isEmpty ? "the server answered \(code)" : "the server answered \(code) \(text)"
        case .timedOut: "timed out"
        case .connectFailed(let reason): "could not connect: \(reason)"
        case .connectionClosed: "the server closed the connection"
        case .tls(let reason): "TLS failed: \(reason)"
        case .malformedReply(let reason): "malformed reply: \(reason)"
        case .refused(let reason): "refused: \(reason)"
        case .invalidInput(let reason): "cannot be sent: \(reason)"
        }
        return "SMTP \(stepName) failed (\(isPermanent ? "permanent" : "transient")): \(what)"
    }
}
