import HTTPServer
import Synchronization

/// Every metric the server exposes at `/metrics`. Names are docs/guides/operating.md's; values never include a
/// token, code, secret or key — labels come from fixed vocabularies only.
public final class Metrics: Sendable {
    let http = HTTPMetrics()
    let apple = AppleMetrics()
    let notifications = NotificationMetrics()
    let signIns = LabeledCounter(name: "siwa_sign_ins_total", help: "Sign-ins by outcome.", label: "outcome")
    let refreshValidations = LabeledCounter(
        name: "siwa_refresh_validations_total", help: "Re-validations of stored refresh tokens with Apple, by outcome.", label: "outcome")
    let revocations = RevocationMetrics()
    let webhooks = WebhookMetrics()
    let mail = MailMetrics()
    /// docs/guides/passwords-and-email.md: mail not sent, by why (`rate`: the address's hourly limit; `relay_disabled`).
    let emailSuppressed = LabeledCounter(name: "siwa_email_suppressed_total", help: "Email not sent, by reason (rate: a code past its address's hourly limit; relay_disabled: Apple's relay does not forward to the user).", label: "reason")
    /// Reset requests' work, run after the answer (`EmailRequestQueue`): `done`, `failed`, `dropped`.
    let emailRequests = LabeledCounter(
        name: "siwa_email_requests_total", help: "Reset requests' work after the answer, by outcome.", label: "outcome")
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
        apple.render(into: &output)
        notifications.render(into: &output)
        signIns.render(into: &output)
        refreshValidations.render(into: &output)
        revocations.render(into: &output)
        webhooks.render(into: &output)
        mail.render(into: &output)
        emailSuppressed.render(into: &output)
        emailRequests.render(into: &output)
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
