import SMTP
import TLS
import Testing

/// A throwaway CA and a leaf for 127.0.0.1 and localhost, a `FakeSMTPServer` presenting it,
/// and clients that trust that CA alone.
struct SMTPSessionFixture {
    let authority: CertificateAuthority
    let server: FakeSMTPServer

    static let password = "s3cret-Pa55word"

    init(
        implicitTLS: Bool = false, extensions: [String] = ["PIPELINING", "STARTTLS", "AUTH PLAIN LOGIN"], dnsNames: [String] = ["localhost"],
        ipAddresses: [String] = ["127.0.0.1"], script: @escaping FakeSMTPServer.Script = { _, _ in nil }
    ) throws {
        authority = try CertificateAuthority()
        let leaf = try authority.issue(dnsNames: dnsNames, ipAddresses: ipAddresses)
        server = try FakeSMTPServer(tls: TLSServerContext(leaf), implicitTLS: implicitTLS, extensions: extensions, script: script)
    }

    /// `smtp://mailer:<password>@127.0.0.1:<port>` unless told otherwise.
    func url(scheme: String = "smtp", credentials: Bool = true, host: String = "127.0.0.1") throws -> SMTPURL {
        try SMTPURL("\(scheme)://\(credentials ? "mailer:\(Self.password)@" : "")\(host):\(server.port)")
    }

    func client(_ url: SMTPURL? = nil, stepTimeout: Duration = .seconds(10), trusting ca: String? = nil, clientName: String? = "client.example") throws -> SMTPClient {
        try SMTPClient(configuration: SMTPConfiguration(
            url: url ?? self.url(), stepTimeout: stepTimeout, clientName: clientName, extraCAPEM: ca ?? authority.certificatePEM, trustOnlyExtraCAs: true))
    }

    static func message(subject: String = "Verify your email", text: String = "Your code is 1234.", id: String = "m1@siwa.example.com") throws -> MailMessage {
        try MailMessage(
            from: MailAddress("noreply@siwa.example.com", displayName: "Siwa"), to: [MailAddress("kim@example.com", displayName: "Kim")],
            subject: subject, text: text, html: "<p>\(text)</p>", messageID: id, date: 1_796_119_200)
    }
}

/// The SMTP error a call ends with, or nil when it succeeded (any other error is recorded).
func smtpFailure(_ call: () async throws -> Void) async -> SMTPError? {
    do {
        try await call()
        return nil
    } catch let error as SMTPError {
        return error
    } catch {
        Issue.record("not an SMTPError: \(error)")
        return nil
    }
}

/// What the client's dot-stuffing put on the wire, undone as a server does (RFC 5321 §4.5.2).
func unstuffed(_ bytes: [UInt8]) -> [UInt8] {
    var output: [UInt8] = []
    var atLineStart = true
    for byte in bytes {
        if atLineStart, byte == UInt8(ascii: ".") {
            atLineStart = false
            continue
        }
        output.append(byte)
        atLineStart = byte == 0x0A
    }
    return output
}
