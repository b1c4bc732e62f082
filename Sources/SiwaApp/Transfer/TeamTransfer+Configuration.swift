import Accounts
import AppleClient
import HTTPClient
import Logging
import Store

/// The transfer commands' runs, opened from the configuration: its database (as the server opens
/// it) and its Apple client.
extension TeamTransfer {
    /// Opens the configured database and Apple client. Throws `ConfigurationError` when the
    /// team's credentials are missing or unusable (the commands exit 2).
    public convenience init(
        configuration: Configuration, console: TransferConsole, clocks: Clocks = .system,
        stopRequested: @escaping @Sendable () -> Bool = { false }
    ) throws {
        try self.init(
            configuration: configuration, console: console, clocks: clocks, stopRequested: stopRequested,
            sleep: { seconds in try? await Task.sleep(for: .microseconds(Int(seconds * 1_000_000))) },
            pacing: { TransferPacing(rate: Double($0)) })
    }

    convenience init(
        configuration: Configuration, console: TransferConsole, clocks: Clocks, stopRequested: @escaping @Sendable () -> Bool,
        sleep: @escaping @Sendable (Double) async -> Void, pacing: @escaping @Sendable (Int) -> TransferPacing
    ) throws {
        let minter = try AppleCredentials.minter(configuration)
        let http = try HTTPClient(configuration: HTTPClientConfiguration(extraCAFile: configuration.appleCAFile, workerThreads: 2))
        let store = try Self.openStore(configuration, console: console)
        self.init(
            store: store,
            api: AppleAPI(baseURL: configuration.appleBaseURL, http: http, secrets: minter, clock: clocks.wall, monotonic: clocks.monotonic),
            teamID: configuration.teamID, defaultClientID: configuration.webClientID ?? configuration.clientIDs.first, console: console,
            wall: clocks.wall, monotonic: clocks.monotonic, stopRequested: stopRequested, sleep: sleep, pacing: pacing)
    }

    /// The store as the server opens it; with `webhook_url` set, every user moved to a new
    /// `sub` appends its `user.updated` for the server to deliver. Warnings go to stderr: stdout
    /// may be carrying the CSV.
    static func openStore(_ configuration: Configuration, console: TransferConsole) throws -> Store {
        let logger = Logger(label: "siwa.transfer") { _ in ConsoleLogHandler(console: console) }
        let events = configuration.webhookURL == nil ? nil : WebhookEventBody.renderer
        return try Store.open(configuration.database, connections: 2, events: events) {
            try DataKeyFile.key(for: configuration, logger: logger)
        }
    }

    /// `transfer status` on the configured database; needs no Apple credentials.
    public static func status(configuration: Configuration, console: TransferConsole, now: Int64) async throws -> String {
        let store = try openStore(configuration, console: console)
        defer { store.close() }
        return try await status(of: store, now: now)
    }
}
