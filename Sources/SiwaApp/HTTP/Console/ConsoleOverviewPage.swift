import Accounts
import HTTPServer
import Store

/// `/console`: the numbers that matter first (users, live sessions), then what is waiting (the
/// webhook and mail queues, revocations), Apple's keys, and a team transfer when one is under way.
struct ConsoleOverviewPage: Sendable {
    struct Queue: Sendable, Equatable {
        /// Whether the deliverer runs at all (`webhook_url`, `smtp_url`).
        var configured: Bool
        var depth: Int
        var oldestCreatedAt: Int64?
        var failed: Int
    }

    var users: UserCounts
    var liveSessions: Int
    var webhooks: Queue
    var mail: Queue
    var revocations: (count: Int, oldestCreatedAt: Int64?)
    var keySource: String
    var keyAge: Double?
    var keyIDs: [String]
    var transfer: TransferStatus?
    /// Sign-ins per hour by method, and failures per hour, over the last 48 hours (from the
    /// audit trail); nil when it holds none to draw.
    var charts: [HourlyChart] = []

    func html(now: Int64, csrf: String) -> String {
        var body = "<h1>Overview</h1>"
        body += #"<section class="stats" aria-label="Accounts">"#
        body += Self.stat("Users", users.all, link: "/console/users")
        body += Self.stat("With an Apple ID", users.withAppleID)
        body += Self.stat("With a password", users.withPassword)
        body += Self.stat("Live sessions", liveSessions)
        body += "</section>"
        for chart in charts {
            body += #"<section class="card"><h2>\#(HTMLText.escape(chart.title)), last 48 hours</h2>\#(chart.svg())\#(chart.legend())</section>"#
        }
        body += #"<section class="card"><h2>Waiting</h2><table class="data"><thead><tr><th scope="col">Queue</th><th scope="col" class="num">Waiting</th><th scope="col">Oldest</th><th scope="col" class="num">Failed</th><th scope="col"></th></tr></thead><tbody>"#
        body += Self.queueRow("Webhooks", webhooks, now: now, link: "/console/webhooks", off: "webhook_url is not set")
        body += Self.queueRow("Email", mail, now: now, link: "/console/email", off: "smtp_url is not set")
        body += "<tr><th scope=\"row\">Revocations at Apple</th><td class=\"num\">\(ConsolePage.count(revocations.count))</td><td>\(ConsolePage.ago(revocations.oldestCreatedAt, now: now))</td><td class=\"num\">—</td><td></td></tr>"
        body += "</tbody></table></section>"
        body += #"<section class="card"><h2>Apple's signing keys</h2><dl class="facts">"#
        body += "<dt>Source</dt><dd>\(HTMLText.escape(Self.describe(source: keySource)))</dd>"
        body += "<dt>Fetched</dt><dd>\(keyAge.map { ConsolePage.ago(now - Int64($0), now: now) } ?? "not by this process yet")</dd>"
        body += "<dt>Key ids</dt><dd>\(keyIDs.isEmpty ? "none" : keyIDs.map { "<code>\(HTMLText.escape($0))</code>" }.joined(separator: " "))</dd>"
        body += "</dl></section>"
        if let transfer, transfer.exported > 0 || transfer.imported > 0 {
            body += #"<section class="card"><h2>Team transfer</h2><dl class="facts">"#
            body += "<dt>Exported</dt><dd>\(ConsolePage.count(transfer.exported)) of \(ConsolePage.count(transfer.users))</dd>"
            body += "<dt>Imported</dt><dd>\(ConsolePage.count(transfer.imported))</dd>"
            body += "<dt>Still to do</dt><dd>\(ConsolePage.count(transfer.pending))</dd>"
            body += "<dt>Failed</dt><dd>\(ConsolePage.count(transfer.failed))</dd>"
            body += "<dt>Window opened</dt><dd>\(ConsolePage.time(transfer.windowStartedAt))</dd>"
            body += "</dl></section>"
        }
        return ConsolePage.document(title: "Overview", section: .overview, csrf: csrf, body: body)
    }

    private static func stat(_ label: String, _ value: Int, link: String? = nil) -> String {
        let number = link.map { #"<a href="\#($0)">\#(ConsolePage.count(value))</a>"# } ?? ConsolePage.count(value)
        return #"<div class="stat"><div class="stat-value">\#(number)</div><div class="stat-label">\#(label)</div></div>"#
    }

    private static func queueRow(_ label: String, _ queue: Queue, now: Int64, link: String, off: String) -> String {
        guard queue.configured || queue.depth > 0 || queue.failed > 0 else {
            return "<tr><th scope=\"row\">\(label)</th><td colspan=\"4\" class=\"muted\">off: \(off)</td></tr>"
        }
        let failed = queue.failed > 0 ? #"<span class="badge badge--warn">\#(ConsoleQueuePages.failedCount(queue.failed))</span>"# : "0"
        return "<tr><th scope=\"row\">\(label)</th><td class=\"num\">\(ConsolePage.count(queue.depth))</td><td>\(ConsolePage.ago(queue.oldestCreatedAt, now: now))</td><td class=\"num\">\(failed)</td><td><a href=\"\(link)\">Failed items</a></td></tr>"
    }

    private static func describe(source: String) -> String {
        switch source {
        case "fetched": "fetched from Apple"
        case "persisted": "the copy saved in the database (Apple not reached yet)"
        default: "none yet: sign-ins wait for them"
        }
    }
}
