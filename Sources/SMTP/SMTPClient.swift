// SMTP: the client siwa-server sends its mail with (docs/guides/passwords-and-email.md, "Sending"). It parses `smtp_url`
// (`SMTPURL`), builds MIME messages (`MailMessage`: multipart/alternative, UTF-8, RFC 2047
// names and subjects, no line break from input in any header), and delivers them over one
// kept connection with STARTTLS or implicit TLS, the server's certificate verified and its
// name matched against subjectAltName only, AUTH PLAIN or LOGIN only over TLS, and a
// deadline on every step. Errors (`SMTPError`) name the step and say whether the failure is
// permanent (5xx) or transient, and never carry the password or the message.
//
// The mail outbox sits above this module; nothing here knows about queues, retries or
// templates.

import COpenSSL
import Glibc
import SystemThread
import TLS

/// Sends mail through one SMTP server. Blocking socket work runs on the client's own thread;
/// callers suspend, so a slow server never holds one of Swift's cooperative threads. Messages
/// go one at a time, in the order they were given, over one connection kept open between
/// them (see `SMTPSession`).
public final class SMTPClient: Sendable {
    public let configuration: SMTPConfiguration
    private let session: SMTPSession
    private let jobs = BoundedJobQueue<@Sendable () -> Void>(capacity: 1024)
    private let thread: pthread_t

    /// Reads the extra CAs and starts the client's thread; connects to nothing yet.
    public init(configuration: SMTPConfiguration) throws(SMTPError) {
        if let name = configuration.clientName, !EHLOName.isValid(name) {
            throw SMTPError(step: .setup, cause: .invalidInput("the EHLO name is not a domain name or an address literal"))
        }
        let tlsContext: TLSClientContext
        do throws(TLSError) {
            tlsContext = try TLSClientContext(
                extraCAPEM: configuration.extraCAPEM, extraCAFile: configuration.extraCAFile, trustOnlyExtraCAs: configuration.trustOnlyExtraCAs)
        } catch {
            throw SMTPError(step: .setup, cause: .tls("\(error)"))
        }
        self.configuration = configuration
        session = SMTPSession(configuration: configuration, tlsContext: tlsContext)
        let jobs = self.jobs
        do {
            thread = try SystemThread.start(name: "siwa-smtp") {
                while let job = jobs.next() { job() }
                // Frees OpenSSL's per-thread state now, not in a destructor racing exit.
                OPENSSL_thread_stop()
            }
        } catch {
            throw SMTPError(step: .setup, cause: .refused("\(error)"))
        }
    }

    /// Waits for the sends under way; the kept connection is closed without `QUIT` (call
    /// `close()` first for a polite goodbye).
    deinit {
        jobs.close()
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// Sends `message` to its `To` addresses, `MAIL FROM` its `From` address; the server's
    /// answer to the final `.`. Throws at the first step that fails; a 5xx to `RCPT TO` is a
    /// permanent error for that recipient (`step == .recipient`, `isPermanent`).
    @discardableResult
    public func send(_ message: MailMessage) async throws(SMTPError) -> SMTPReply {
        try await send(from: message.from, to: message.to, data: message.rendered())
    }

    /// Sends a message already in RFC 5322 form. Line ends are made CRLF and lines starting
    /// with `.` are dot-stuffed here.
    @discardableResult
    public func send(from: MailAddress, to recipients: [MailAddress], data: [UInt8]) async throws(SMTPError) -> SMTPReply {
        try await run { session throws(SMTPError) in try session.send(from: from, to: recipients, data: data) }
    }

    /// Connects, negotiates TLS and logs in on a connection of its own, then quits it; sends
    /// nothing. For `doctor`.
    public func checkConnection() async throws(SMTPError) {
        try await run { session throws(SMTPError) in try session.check() }
    }

    /// Quits the kept connection (`QUIT`); a later `send` opens a new one.
    public func close() async {
        _ = try? await run { session in session.quit() }
    }

    /// Connections opened so far (tests see reuse and reconnection).
    var connectionsOpened: Int {
        get async { (try? await run { session in session.connectionsOpened }) ?? 0 }
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable (SMTPSession) throws(SMTPError) -> T) async throws(SMTPError) -> T {
        let session = self.session
        let jobs = self.jobs
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, SMTPError>, Never>) in
            do throws(BoundedJobQueue<@Sendable () -> Void>.Refusal) {
                try jobs.submit {
                    continuation.resume(returning: Result { () throws(SMTPError) in try work(session) })
                }
            } catch {
                continuation.resume(returning: .failure(SMTPError(step: .setup, cause: .refused("too many messages are waiting to be sent"))))
            }
        }
        return try result.get()
    }
}
