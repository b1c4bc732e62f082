import Accounts
import HTTPServer
import JSON
import Store
import WireFormat

/// `/console/events` and the timeline of a user's page: the audit trail, newest first, with who
/// acted (the person, Apple, an operator or the server itself), from where, and the event's detail.
enum ConsoleEventPages {
    /// Events a page of `/console/events` holds, and the timeline of a user's page.
    static let pageSize = 50

    static func page(events: [AuditEvent], next: AuditCursor?, type: String?, userID: String?, now: Int64, csrf: String) -> String {
        var body = "<h1>Events</h1>"
        body += #"<form method="get" action="/console/events" class="search filters"><div class="search-row">"#
        body += #"<label>Type or prefix<input type="text" name="type" value="\#(HTMLText.escape(type ?? ""))" list="event-types" placeholder="sign_in." spellcheck="false"></label>"#
        body += #"<label>User id<input type="text" name="user_id" value="\#(HTMLText.escape(userID ?? ""))" placeholder="usr_…" spellcheck="false"></label>"#
        body += #"<button type="submit">Filter</button></div><datalist id="event-types">"#
        for prefix in Self.prefixes { body += #"<option value="\#(prefix)">"# }
        body += "</datalist></form>"
        if events.isEmpty {
            body += #"<p class="muted">No event\#(type == nil && userID == nil ? " yet" : " matches these filters").</p>"#
        } else {
            body += #"<section class="card flush">\#(table(events, showUser: userID == nil, now: now))</section>"#
        }
        if let next {
            var link = "/console/events?cursor=" + FormURLEncoding.escape(next.encoded)
            if let type { link += "&type=" + FormURLEncoding.escape(type) }
            if let userID { link += "&user_id=" + FormURLEncoding.escape(userID) }
            body += #"<p><a class="button" href="\#(HTMLText.escape(link))">Older events</a></p>"#
        }
        return ConsolePage.document(title: "Events", section: .events, csrf: csrf, body: body)
    }

    /// The events as a table; `showUser` adds the user column (not on a user's own timeline).
    static func table(_ events: [AuditEvent], showUser: Bool, now: Int64) -> String {
        var out = #"<table class="data events"><thead><tr><th scope="col">When</th><th scope="col">Event</th>"#
        if showUser { out += #"<th scope="col">User</th>"# }
        out += #"<th scope="col">By</th><th scope="col">From</th></tr></thead><tbody>"#
        for event in events {
            out += "<tr><td><time datetime=\"\(RFC3339.format(event.at))\">\(ConsolePage.time(event.at))</time><div class=\"muted\">\(ConsolePage.ago(event.at, now: now))</div></td>"
            out += "<td><code>\(HTMLText.escape(event.type))</code>\(detail(event.detail))</td>"
            if showUser {
                out += "<td>" + (event.userID.map { #"<a href="/console/users/\#(HTMLText.escape($0))"><code>\#(HTMLText.escape($0))</code></a>"# } ?? "—") + "</td>"
            }
            let actor = event.actor == "user" ? event.actor : #"<span class="badge\#(event.actor == "admin" ? " badge--warn" : "")">\#(HTMLText.escape(event.actor))</span>"#
            out += "<td>\(actor)</td><td>\(HTMLText.escape(event.ip ?? "—"))"
            if let agent = event.userAgent { out += #"<div class="muted agent">\#(HTMLText.escape(agent))</div>"# }
            out += "</td></tr>"
        }
        return out + "</tbody></table>"
    }

    /// The detail's members as `name: value` (the detail never holds a secret: docs/reference).
    private static func detail(_ object: JSONObject) -> String {
        guard !object.keys.isEmpty else { return "" }
        let parts = object.keys.map { key -> String in
            let value = object[key].map(Self.text) ?? ""
            return "\(HTMLText.escape(key)): \(HTMLText.escape(value))"
        }
        return #"<div class="muted">\#(parts.joined(separator: " · "))</div>"#
    }

    private static func text(_ value: JSONValue) -> String {
        if let string = value.string { return string }
        if let array = value.array { return array.map(text).joined(separator: ", ") }
        return JSONWriter.string(value)
    }

    /// The families an operator filters by most, offered in the type field.
    static let prefixes = ["sign_in.", "session.", "user.", "email.", "apple.", "password.", "apple_id.", "admin.", "transfer."]
}
