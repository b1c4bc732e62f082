import AppleClient
import Glibc
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

    init(configuration: Configuration, serverState: ServerState, metrics: Metrics, logger: Logger) throws {
        http = try HTTPClient(configuration: HTTPClientConfiguration(extraCAFile: configuration.appleCAFile))
        let appleMetrics = metrics.apple
        keys = KeySetCache(
            url: configuration.appleBaseURL + AppleEndpoint.keys.path, http: http,
            persistence: StoredKeySet(state: serverState, logger: logger), observer: appleMetrics,
            monotonic: Clocks.monotonicSeconds,
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
                clock: Clocks.wallSeconds, monotonic: Clocks.monotonicSeconds)
        } else {
            api = nil
        }
    }
}

/// The two clocks the server reads, as values that tests can replace.
enum Clocks {
    static let wallSeconds: @Sendable () -> Int64 = { Int64(time(nil)) }
    static let monotonicSeconds: @Sendable () -> Double = {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
