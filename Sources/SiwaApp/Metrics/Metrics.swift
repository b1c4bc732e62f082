import Accounts
import HTTPServer
import Store
import Synchronization

/// Every metric the server exposes at `/metrics`. Names are docs/guides/operating.md's; values never include a
/// token, code, secret or key — labels come from fixed vocabularies only.
public final class Metrics: Sendable {
    let http = HTTPMetrics()
    /// The accounts' work: what the `Accounts` module counts.
    let accounts = AccountMetrics()
    var apple: AppleMetrics { accounts.apple }
    var notifications: NotificationMetrics { accounts.notifications }
    var signIns: LabeledCounter { accounts.signIns }
    var refreshValidations: LabeledCounter { accounts.refreshValidations }
    var revocations: RevocationMetrics { accounts.revocations }
    var webhooks: WebhookMetrics { accounts.webhooks }
    var mail: MailMetrics { accounts.mail }
    var emailSuppressed: LabeledCounter { accounts.emailSuppressed }
    var emailRequests: LabeledCounter { accounts.emailRequests }
    /// Counts live sessions when `/metrics` is read (one query); set once the store is open.
    private let activeSessions = Mutex<(@Sendable () async -> Int?)?>(nil)
    /// The access log's sink, whose dropped lines `siwa_log_lines_dropped_total` counts.
    private let logSink = Mutex<LogSink?>(nil)
    /// The PostgreSQL session cache's listener; nil on SQLite, where its metrics are not shown.
    private let sessionCacheListener = Mutex<(@Sendable () -> SessionCacheListenerState?)?>(nil)

    public init() {}

    func countActiveSessions(with counter: @escaping @Sendable () async -> Int?) {
        activeSessions.withLock { $0 = counter }
    }

    func countDroppedLogLines(of sink: LogSink) {
        logSink.withLock { $0 = sink }
    }

    func watchSessionCacheListener(with state: @escaping @Sendable () -> SessionCacheListenerState?) {
        sessionCacheListener.withLock { $0 = state }
    }

    public func render() async -> String {
        var output = ""
        http.render(into: &output)
        accounts.render(into: &output)
        PrometheusText.header(
            "siwa_log_lines_dropped_total", type: "counter", help: "Log lines dropped because the output could not keep up.", into: &output)
        output += "siwa_log_lines_dropped_total \(logSink.withLock { $0 }?.droppedLines ?? 0)\n"
        if let listener = sessionCacheListener.withLock({ $0 })?() {
            PrometheusText.header(
                "siwa_session_cache_listening", type: "gauge",
                help: "1 while the PostgreSQL session cache's listener listens (sessions may be served from memory), else 0.", into: &output)
            output += "siwa_session_cache_listening \(listener.isListening ? 1 : 0)\n"
            PrometheusText.header(
                "siwa_session_cache_outages_total", type: "counter",
                help: "Times the PostgreSQL session cache stopped serving from memory because its listener broke or answered late.",
                into: &output)
            output += "siwa_session_cache_outages_total{cause=\"disconnected\"} \(listener.outages.disconnected)\n"
            output += "siwa_session_cache_outages_total{cause=\"unconfirmed\"} \(listener.outages.unconfirmed)\n"
        }
        if let counter = activeSessions.withLock({ $0 }), let count = await counter() {
            PrometheusText.header("siwa_sessions_active", type: "gauge", help: "Sessions that have neither expired nor gone idle.", into: &output)
            output += "siwa_sessions_active \(count)\n"
        }
        return output
    }
}
