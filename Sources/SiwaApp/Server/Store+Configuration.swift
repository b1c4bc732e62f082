import Logging
import Store

extension Store {
    /// The configured database, opened as the server opens it: sealed with `data_key` (or the
    /// key file beside a SQLite database), and with every change appending its webhook event
    /// when `webhook_url` is set, so a change made from the command line is reported exactly as
    /// one made through the API. Returns the data key too (the server derives its CSRF key
    /// from it).
    static func open(_ configuration: Configuration, connections: Int, logger: Logger) throws -> (store: Store, dataKey: [UInt8]) {
        var dataKey: [UInt8] = []
        let events = configuration.webhookURL == nil ? nil : WebhookEventBody.renderer
        // The key is asked for once the database (and its folder) exists.
        let store = try Store.open(
            configuration.database, connections: connections, busyTimeout: configuration.databaseBusyTimeout, events: events
        ) {
            dataKey = try DataKeyFile.key(for: configuration, logger: logger)
            return dataKey
        }
        return (store, dataKey)
    }
}
