/// How an `SMTPClient` reaches its server.
public struct SMTPConfiguration: Sendable {
    public var url: SMTPURL
    /// Bounds each step: the connect, the greeting, each command and its reply, each TLS
    /// handshake, and the message with its final `.` (docs/guides/passwords-and-email.md: 10 s a step).
    public var stepTimeout: Duration
    /// The name sent with `EHLO`; nil means this machine's host name when it is a dotted
    /// domain name, else the connection's own address as a literal (`[192.0.2.1]`), as
    /// RFC 5321 §4.1.4 asks.
    public var clientName: String?
    /// A PEM file of CA certificates trusted as well as the system's (`smtp_ca_file`).
    public var extraCAFile: String?
    /// PEM text of CA certificates trusted as well as the system's.
    public var extraCAPEM: String?
    /// Trust only the extra CAs, not the system store (tests).
    public var trustOnlyExtraCAs: Bool

    public init(
        url: SMTPURL, stepTimeout: Duration = .seconds(10), clientName: String? = nil, extraCAFile: String? = nil, extraCAPEM: String? = nil,
        trustOnlyExtraCAs: Bool = false
    ) {
        self.url = url
        self.stepTimeout = stepTimeout
        self.clientName = clientName
        self.extraCAFile = extraCAFile
        self.extraCAPEM = extraCAPEM
        self.trustOnlyExtraCAs = trustOnlyExtraCAs
    }
}
