import Accounts
import HTTPServer
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

    public init() {}

    func countActiveSessions(with counter: @escaping @Sendable () async -> Int?) {
        activeSessions.withLock { $0 = counter }
    }

    func countDroppedLogLines(of sink: LogSink) {
        logSink.withLock { $0 = sink }
    }

    public func render() async -> String {
        var output = ""
        http.render(into: &output)
        accounts.render(into: &output)
        PrometheusText.header(
            "siwa_log_lines_dropped_total", type: "counter", help: "Log lines dropped because the output could not keep up.", into: &output)
        output += "siwa_log_lines_dropped_total \(logSink.withLock { $0 }?.droppedLines ?? 0)\n"
        if let counter = activeSessions.withLock({ $0 }), let count = await counter() {
            PrometheusText.header("siwa_sessions_active", type: "gauge", help: "Sessions that have neither expired nor gone idle.", into: &output)
            output += "siwa_sessions_active \(count)\n"
        }
        return output
    }
}
