import TLS

/// Keeps one connection to the SMTP server across messages: the first message opens it, each
/// later one starts with `RSET` on it, and when that fails (the server closed the idle
/// connection, or answered 421) a fresh connection is opened in its place, so a caller never
/// sees a connection the server dropped. Nothing of a message is ever sent twice here: a
/// failure once its `MAIL FROM` went out is the caller's to retry.
///
/// Blocking; used only by its `SMTPClient`'s worker thread (hence unchecked Sendable).
final class SMTPSession: @unchecked Sendable {
    private let configuration: SMTPConfiguration
    private let tlsContext: TLSClientContext
    private var connection: SMTPConnection?
    /// Connections opened so far (tests see reuse and reconnection).
    private(set) var connectionsOpened = 0

    init(configuration: SMTPConfiguration, tlsContext: TLSClientContext) {
        self.configuration = configuration
        self.tlsContext = tlsContext
    }

    func send(from: MailAddress, to recipients: [MailAddress], data: [UInt8]) throws(SMTPError) -> SMTPReply {
        let connection = try readyConnection()
        defer { if !connection.isUsable { self.connection = nil } }
        return try connection.send(from: from, to: recipients, data: data)
    }

    /// Opens a separate connection through `AUTH`, then quits it: what `doctor` checks. The kept
    /// connection, if any, is left alone.
    func check() throws(SMTPError) {
        let probe = try SMTPConnection.open(configuration: configuration, tlsContext: tlsContext)
        probe.quit()
    }

    /// Quits the kept connection; the next message opens a new one.
    func quit() {
        connection?.quit()
        connection = nil
    }

    private func readyConnection() throws(SMTPError) -> SMTPConnection {
        if let kept = connection {
            if kept.isUsable, !kept.hasStartedTransaction { return kept }
            if kept.isUsable, (try? kept.reset()) != nil { return kept }
            // Closed by the server while idle, or in a state RSET does not clear: start afresh.
            connection = nil
        }
        let fresh = try SMTPConnection.open(configuration: configuration, tlsContext: tlsContext)
        connectionsOpened += 1
        connection = fresh
        return fresh
    }
}
