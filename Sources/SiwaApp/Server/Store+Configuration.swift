import Accounts
import Logging
import SMTP
import Store

extension Store {
    /// The configured database, opened as the server opens it: sealed with `data_key` (or the
    /// key file beside a SQLite database), and with every change appending its webhook event
    /// when `webhook_url` is set, so a change made from the command line is reported exactly as
    /// one made through the API. Returns the data key too (the server derives its CSRF key
    /// from it). With `smtp_url`, changes write their mail too (docs/guides/passwords-and-email.md); a message dropped
    /// for a relay address whose forwarding is off is logged and counted in `suppressed`.
    static func open(
        _ configuration: Configuration, connections: Int, logger: Logger, suppressed: LabeledCounter? = nil
    ) throws -> (store: Store, dataKey: [UInt8]) {
        var dataKey: [UInt8] = []
        let events = configuration.webhookURL == nil ? nil : WebhookEventBody.renderer
        let mail = configuration.emailFrom.flatMap { from in
            configuration.smtpURL.map { _ in
                MailSettings(messageIDDomain: from.address.split(separator: "@").last.map(String.init) ?? "localhost") { kind, reason in
                    suppressed?.increment(reason.rawValue)
                    logger.info("email suppressed: Apple's relay does not forward to this user", metadata: [
                        "kind": .string(kind), "reason": .string(reason.rawValue),
                    ])
                }
            }
        }
        // The key is asked for once the database (and its folder) exists.
        let store = try Store.open(
            configuration.database, connections: connections, busyTimeout: configuration.databaseBusyTimeout, events: events, mail: mail
        ) {
            dataKey = try DataKeyFile.key(for: configuration, logger: logger)
            return dataKey
        }
        return (store, dataKey)
    }
}
