import Accounts
import Store

/// What `siwa-server email failed` prints: one line per failed message (id, kind, recipient,
/// attempts, created, the last error), in columns, or one line saying there are none.
public enum FailedMailReport {
    public static func text(_ messages: [FailedMail]) -> String {
        guard !messages.isEmpty else { return "no failed email" }
        return ReportTable.text(
            header: ["ID", "KIND", "TO", "ATTEMPTS", "CREATED", "LAST ERROR"],
            rows: messages.map { mail in
                [mail.id, mail.kind, mail.recipient, String(mail.attempts), RFC3339.format(mail.createdAt), mail.lastError ?? "-"]
            },
            closing: "\(messages.count) failed message(s); `siwa-server email retry ID` or `--all` queues them again")
    }
}
