import Accounts
import MailTemplates
import OpenSSLCrypto
import SMTP
import WireFormat

/// `siwa-server email test --to ADDRESS`: one `test` message sent now, past the outbox, so an
/// operator sees at once whether `smtp_url` and `email_from` work.
public enum MailTest {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends the test message to `address`; returns the server's answer to it. Throws
    /// `Failure` saying why not (never with the password).
    public static func send(configuration: Configuration, to address: String, now: Int64) async throws(Failure) -> String {
        guard let url = configuration.smtpURL, let from = configuration.emailFrom else {
            throw Failure(description: "smtp_url is not set: siwa-server sends no mail")
        }
        let domain = from.address.split(separator: "@").last.map(String.init) ?? "localhost"
        let message: MailMessage
        do {
            let rendered = try MailTemplates.render(.test, language: .en, values: ["when": MailDeliverer.readableTime(now)])
            message = try MailMessage(
                from: from, to: [try MailAddress(address)], subject: rendered.subject, text: rendered.text, html: rendered.html,
                messageID: "test_\(Hex.encode(SecureRandom.bytes(16)))@\(domain)", date: now)
        } catch {
            throw Failure(description: "\(address) cannot be written to: \(error)")
        }
        do throws(SMTPError) {
            let client = try SMTPClient(configuration: SMTPConfiguration(url: url, extraCAFile: configuration.smtpCAFile))
            let reply = try await client.send(message)
            await client.close()
            return "\(reply.code) \(reply.text)"
        } catch {
            throw Failure(description: error.description)
        }
    }
}
