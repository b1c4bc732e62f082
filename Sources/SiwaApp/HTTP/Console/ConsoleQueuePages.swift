import Accounts
import HTTPServer
import Store

/// `/console/webhooks` and `/console/email`: deliveries that failed for good (past their
/// retention), each with its last error, and a way to queue them again.
enum ConsoleQueuePages {
    /// The most failed items a page lists. One more is read, to know there are more; the
    /// count beyond that is not (`siwa-server webhooks failed` / `email failed` list them all).
    static let listed = 200

    /// How many failed, as read with `listed + 1`: "200+" when there were more than listed.
    static func failedCount(_ count: Int) -> String {
        count > listed ? ConsolePage.count(listed) + "+" : ConsolePage.count(count)
    }

    static func webhooks(_ failed: [FailedWebhookEvent], configured: Bool, done: String?, now: Int64, csrf: String) -> String {
        var body = "<h1>Webhooks</h1>" + ConsolePage.notice(done)
        if !configured { body += #"<p class="notice">webhook_url is not set: nothing is delivered, and a retried event waits until it is.</p>"# }
        body += header(count: failed.count, noun: "event", retryAll: "/console/webhooks/retry-all", csrf: csrf)
        if !failed.isEmpty {
            body += #"<section class="card flush"><table class="data"><thead><tr><th scope="col">Event</th><th scope="col">User</th><th scope="col" class="num">Attempts</th><th scope="col">Failed</th><th scope="col">Last error</th><th scope="col"></th></tr></thead><tbody>"#
            for event in failed.prefix(listed) {
                body += "<tr><td><code>\(HTMLText.escape(event.type))</code><div class=\"muted\"><code>\(HTMLText.escape(event.id))</code></div></td>"
                body += "<td>\(userLink(event.userID))</td><td class=\"num\">\(event.attempts)</td>"
                body += "<td>\(ConsolePage.ago(event.failedAt, now: now))</td><td class=\"error-text\">\(HTMLText.escape(event.lastError ?? "—"))</td>"
                body += "<td>\(ConsolePage.button("Retry", action: "/console/webhooks/" + event.id + "/retry", csrf: csrf))</td></tr>"
            }
            body += "</tbody></table></section>"
        }
        return ConsolePage.document(title: "Webhooks", section: .webhooks, csrf: csrf, body: body)
    }

    static func email(_ failed: [FailedMail], configured: Bool, done: String?, now: Int64, csrf: String) -> String {
        var body = "<h1>Email</h1>" + ConsolePage.notice(done)
        if !configured { body += #"<p class="notice">smtp_url is not set: nothing is sent, and a retried message waits until it is.</p>"# }
        body += header(count: failed.count, noun: "message", retryAll: "/console/email/retry-all", csrf: csrf)
        if !failed.isEmpty {
            body += #"<section class="card flush"><table class="data"><thead><tr><th scope="col">Message</th><th scope="col">To</th><th scope="col" class="num">Attempts</th><th scope="col">Failed</th><th scope="col">Last error</th><th scope="col"></th></tr></thead><tbody>"#
            for mail in failed.prefix(listed) {
                body += "<tr><td><code>\(HTMLText.escape(mail.kind))</code><div class=\"muted\">\(mail.userID.map(userLink) ?? "")</div></td>"
                body += "<td>\(HTMLText.escape(mail.recipient))</td><td class=\"num\">\(mail.attempts)</td>"
                body += "<td>\(ConsolePage.ago(mail.failedAt, now: now))</td><td class=\"error-text\">\(HTMLText.escape(mail.lastError ?? "—"))</td>"
                body += "<td>\(ConsolePage.button("Retry", action: "/console/email/" + mail.id + "/retry", csrf: csrf))</td></tr>"
            }
            body += "</tbody></table></section>"
        }
        return ConsolePage.document(title: "Email", section: .email, csrf: csrf, body: body)
    }

    private static func header(count: Int, noun: String, retryAll: String, csrf: String) -> String {
        guard count > 0 else { return #"<p class="muted">No failed \#(noun). Deliveries that keep failing past their retention are listed here.</p>"# }
        let shown = count > listed ? " (the oldest \(listed) shown)" : ""
        return #"<div class="card-head"><p>\#(failedCount(count)) failed \#(noun)\#(count == 1 ? "" : "s")\#(shown).</p>\#(ConsolePage.button("Retry all", action: retryAll, csrf: csrf))</div>"#
    }

    private static func userLink(_ id: String) -> String {
        #"<a href="/console/users/\#(HTMLText.escape(id))"><code>\#(HTMLText.escape(id))</code></a>"#
    }
}
