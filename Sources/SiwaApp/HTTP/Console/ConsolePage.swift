import Accounts
import HTTPServer

/// The console's page layout and headers (docs/guides/operating.md "Console"): server-rendered
/// HTML, every value escaped with the pages' `HTMLText`, one stylesheet, no script at all.
enum ConsolePage {
    /// docs/reference/http-api.md "Console": exactly this, on every console response.
    static let contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'"

    /// The sections of the navigation bar.
    enum Section: String, CaseIterable, Sendable {
        case overview = "Overview", users = "Users", events = "Events", webhooks = "Webhooks", email = "Email"

        var path: String {
            switch self {
            case .overview: "/console"
            case .users: "/console/users"
            case .events: "/console/events"
            case .webhooks: "/console/webhooks"
            case .email: "/console/email"
            }
        }
    }

    /// An HTML page of the console. Never cached (it shows accounts); `Referrer-Policy:
    /// same-origin` so the console's own form posts carry its real `Origin`, which is checked.
    static func response(_ html: String, status: Int = 200, headers extra: [(String, String)] = []) -> HTTPResponse {
        var headers: HTTPHeaders = [
            "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": contentSecurityPolicy,
            "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin", "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
        ]
        for (name, value) in extra { headers.add(name, value) }
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }

    /// A 303 after a form, so the browser follows with a GET.
    static func seeOther(_ location: String, headers extra: [(String, String)] = []) -> HTTPResponse {
        var response = response("", status: 303, headers: [("Location", location)] + extra)
        response.headers.remove("Content-Type")
        return response
    }

    /// - Parameters:
    ///   - section: the navigation entry to mark as current; nil on the sign-in page, which has
    ///     no navigation.
    ///   - csrf: the session's form token, for the sign-out button; nil when signed out.
    static func document(title: String, section: Section?, csrf: String?, body: String) -> String {
        var navigation = ""
        if let section {
            navigation = #"<nav class="console-nav" aria-label="Console">"#
            for entry in Section.allCases {
                let current = entry == section ? #" aria-current="page""# : ""
                navigation += #"<a href="\#(entry.path)"\#(current)>\#(entry.rawValue)</a>"#
            }
            if let csrf {
                navigation += #"<form method="post" action="/console/logout" class="console-signout">\#(hiddenToken(csrf))<button type="submit">Sign out</button></form>"#
            }
            navigation += "</nav>"
        }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="robots" content="noindex">
            <title>\(HTMLText.escape(title)) — siwa-server console</title>
            <link rel="stylesheet" href="/static/console.css">
            </head>
            <body>
            <header class="console-header"><a class="console-brand" href="/console">siwa-server <span>console</span></a>\(navigation)</header>
            <main class="console">
            \(body)
            </main>
            </body>
            </html>
            """
    }

    static func hiddenToken(_ csrf: String) -> String {
        #"<input type="hidden" name="csrf" value="\#(HTMLText.escape(csrf))">"#
    }

    /// A one-button form posting to `action` (ending a session, retrying a delivery).
    static func button(_ label: String, action: String, csrf: String, danger: Bool = false) -> String {
        #"<form method="post" action="\#(HTMLText.escape(action))" class="inline">\#(hiddenToken(csrf))<button type="submit" class="small\#(danger ? " danger" : "")">\#(HTMLText.escape(label))</button></form>"#
    }

    /// The line a page shows after an action (`?done=` of the 303 that followed it); only the
    /// texts known here are shown, so a link cannot make the console say anything else.
    static func notice(_ done: String?) -> String {
        let texts = [
            "sessions_ended": "Every session of this user has ended.", "session_ended": "The session has ended.",
            "external_id_set": "external_id is saved.", "external_id_cleared": "external_id is cleared.",
            "external_id_taken": "Another user already has this external_id; nothing changed.",
            "external_id_invalid": "That external_id cannot be stored (empty, over 256 bytes, or a control character); nothing changed.",
            "not_confirmed": "Tick the confirmation to delete the user; nothing changed.",
            "user_deleted": "The user was deleted; their Apple tokens are being revoked.",
            "retried": "Queued again for delivery.", "retried_all": "Every failed item is queued again.",
            "not_found": "It was no longer there; nothing changed.",
        ]
        guard let done, let text = texts[done] else { return "" }
        let warning = ["external_id_taken", "external_id_invalid", "not_confirmed", "not_found"].contains(done)
        return #"<p class="notice\#(warning ? "" : " notice--ok")" role="status">\#(HTMLText.escape(text))</p>"#
    }

    /// `2026-11-27 14:03 UTC`, or an em dash for no time.
    static func time(_ seconds: Int64?) -> String {
        guard let seconds else { return "—" }
        let text = RFC3339.format(seconds)
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(5)) + " UTC"
    }

    /// "3 min ago", "5 h ago", "2 d ago": how long before `now`.
    static func ago(_ seconds: Int64?, now: Int64) -> String {
        guard let seconds else { return "—" }
        let elapsed = max(0, now - seconds)
        switch elapsed {
        case ..<60: return "just now"
        case ..<3_600: return "\(elapsed / 60) min ago"
        case ..<172_800: return "\(elapsed / 3_600) h ago"
        default: return "\(elapsed / 86_400) d ago"
        }
    }

    /// A number with thousands separators: `12,345`.
    static func count(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }
}
