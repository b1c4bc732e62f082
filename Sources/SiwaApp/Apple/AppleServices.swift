import AppleClient
import HTTPClient
import JOSE
import Logging
import Store

/// Everything that talks to Apple, built from the configuration: the HTTPS client, the key
/// cache, and — when the team's credentials are configured — the REST client.
final class AppleServices: Sendable {
    let http: HTTPClient
    let keys: KeySetCache
    let api: AppleAPI?

    init(configuration: Configuration, serverState: ServerState, metrics: Metrics, clocks: Clocks, logger: Logger) throws {
        http = try HTTPClient(configuration: HTTPClientConfiguration(totalTimeout: configuration.appleCallDeadline, extraCAFile: configuration.appleCAFile))
        let appleMetrics = metrics.apple
        keys = KeySetCache(
            url: configuration.appleBaseURL + AppleEndpoint.keys.path, http: http,
            persistence: StoredKeySet(state: serverState, logger: logger), observer: appleMetrics,
            monotonic: clocks.monotonic,
            onRefresh: { outcome in
                appleMetrics.keySetRefreshed(outcome: outcome)
                // Retries come every 30 s while this lasts; each failure is worth a line.
                if outcome != "ok" {
                    logger.warning("cannot fetch Apple's signing keys", metadata: [
                        "outcome": .string(outcome), "url": .string(configuration.appleBaseURL + AppleEndpoint.keys.path),
                    ])
                }
            })
        if let minter = try? AppleCredentials.minter(configuration) {
            api = AppleAPI(
                baseURL: configuration.appleBaseURL, http: http, secrets: minter, observer: appleMetrics,
                clock: clocks.wall, monotonic: clocks.monotonic)
        } else {
            api = nil
        }
    }
}
