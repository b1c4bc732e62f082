/// The simulator's SMTP listener and mailbox (`apple-sim --smtp-port`): where it listens and the
/// bounds that keep a slow, hostile or very chatty client from wedging it or filling memory.
public struct SimulatorMailSettings: Sendable {
    /// On 127.0.0.1; 0 asks the system for a free port.
    public var port: UInt16
    /// The largest message accepted (what `DATA` carries, after dot-unstuffing).
    public var maxMessageBytes: Int
    /// How long a client may take to send one command or one line of a message.
    public var commandTimeout: Duration
    /// How long one connection may last in all, however steadily it trickles.
    public var sessionTimeout: Duration
    /// Connections served at once; one more is told 421 and closed.
    public var maxConnections: Int
    /// Messages kept; the oldest go first.
    public var mailboxCapacity: Int

    public init(
        port: UInt16 = 0, maxMessageBytes: Int = 1 << 20, commandTimeout: Duration = .seconds(60), sessionTimeout: Duration = .seconds(600),
        maxConnections: Int = 32, mailboxCapacity: Int = 1000
    ) {
        self.port = port
        self.maxMessageBytes = maxMessageBytes
        self.commandTimeout = commandTimeout
        self.sessionTimeout = sessionTimeout
        self.maxConnections = maxConnections
        self.mailboxCapacity = mailboxCapacity
    }
}
