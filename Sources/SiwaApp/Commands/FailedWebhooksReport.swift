import Accounts
import Store

/// What `siwa-server webhooks failed` prints: one line per failed event (id, type, user id,
/// attempts, created, the last error), in columns, or one line saying there are none.
public enum FailedWebhooksReport {
    public static func text(_ events: [FailedWebhookEvent]) -> String {
        guard !events.isEmpty else { return "no failed webhook events" }
        return ReportTable.text(
            header: ["ID", "TYPE", "USER", "ATTEMPTS", "CREATED", "LAST ERROR"],
            rows: events.map { event in
                [event.id, event.type, event.userID, String(event.attempts), RFC3339.format(event.createdAt), event.lastError ?? "-"]
            },
            closing: "\(events.count) failed event(s); `siwa-server webhooks retry ID` or `--all` queues them again")
    }
}
