import Accounts
import HTTPServer
import Store
import WireFormat

/// `/console/users?q=` and `/console/users/{id}`: finding a user, and everything about one with
/// the actions an operator may take.
enum ConsoleUserPages {
    /// Users a page of the search holds.
    static let pageSize = 50

    static func search(query: String, users: [UserRecord], next: String?, now: Int64, csrf: String) -> String {
        var body = "<h1>Users</h1>"
        body += #"<form method="get" action="/console/users" class="search" role="search"><label for="q">Email, Apple sub, external_id or id</label><div class="search-row"><input type="search" id="q" name="q" value="\#(HTMLText.escape(query))" autocomplete="off" spellcheck="false"><button type="submit">Search</button></div></form>"#
        if users.isEmpty {
            body += #"<p class="muted">\#(query.isEmpty ? "No users yet." : "No user has exactly this email, Apple sub, external_id or id.")</p>"#
        } else {
            body += #"<section class="card flush"><table class="data"><thead><tr><th scope="col">User</th><th scope="col">Email</th><th scope="col">Sign-in</th><th scope="col">Apple</th><th scope="col">Created</th></tr></thead><tbody>"#
            for user in users {
                body += "<tr><td><a href=\"/console/users/\(HTMLText.escape(user.id))\"><code>\(HTMLText.escape(user.id))</code></a>"
                if let name = displayName(user) { body += "<div class=\"muted\">\(HTMLText.escape(name))</div>" }
                body += "</td><td>\(email(user))</td><td>\(user.signInMethods.joined(separator: ", "))</td>"
                body += "<td>\(user.appleSub == nil ? "—" : credential(user))</td><td>\(ConsolePage.ago(user.createdAt, now: now))</td></tr>"
            }
            body += "</tbody></table></section>"
        }
        if let next {
            var link = "/console/users?after=" + FormURLEncoding.escape(next)
            if !query.isEmpty { link += "&q=" + FormURLEncoding.escape(query) }
            body += #"<p><a class="button" href="\#(HTMLText.escape(link))">Next \#(pageSize)</a></p>"#
        }
        return ConsolePage.document(title: "Users", section: .users, csrf: csrf, body: body)
    }

    struct Detail: Sendable {
        var user: UserRecord
        var apple: AppleView
        var sessions: [SessionRecord]
        /// The newest events of the user; `moreEvents` when there are older ones.
        var events: [AuditEvent] = []
        var moreEvents = false
    }

    static func user(_ detail: Detail, done: String?, now: Int64, csrf: String) -> String {
        let user = detail.user
        let base = "/console/users/" + user.id
        var body = #"<p class="crumbs"><a href="/console/users">Users</a></p>"#
        body += "<h1>\(HTMLText.escape(displayName(user) ?? user.email ?? user.id))</h1>"
        body += ConsolePage.notice(done)

        body += #"<div class="columns"><section class="card"><h2>Account</h2><dl class="facts">"#
        body += "<dt>id</dt><dd><code>\(HTMLText.escape(user.id))</code></dd>"
        body += "<dt>Email</dt><dd>\(email(user))</dd>"
        body += "<dt>Sign-in methods</dt><dd>\(user.signInMethods.isEmpty ? "none" : user.signInMethods.joined(separator: ", "))</dd>"
        body += "<dt>external_id</dt><dd>\(user.externalID.map { "<code>\(HTMLText.escape($0))</code>" } ?? "—")</dd>"
        body += "<dt>Language</dt><dd>\(HTMLText.escape(user.locale))</dd>"
        body += "<dt>Created</dt><dd>\(ConsolePage.time(user.createdAt))</dd>"
        body += "<dt>Updated</dt><dd>\(ConsolePage.time(user.updatedAt))</dd>"
        body += "</dl></section>"

        let apple = detail.apple
        body += #"<section class="card"><h2>Apple's view</h2><dl class="facts">"#
        if let sub = user.appleSub {
            body += "<dt>Apple sub</dt><dd><code>\(HTMLText.escape(sub))</code></dd>"
            body += "<dt>Credential</dt><dd>\(credential(user))</dd>"
            body += "<dt>Email forwarding</dt><dd>\(forwarding(user))</dd>"
            body += "<dt>Real user</dt><dd>\(user.realUserStatus == .likelyReal ? "likely real" : user.realUserStatus.rawValue)</dd>"
            body += "<dt>Issued to</dt><dd>\(apple.clientID.map { "<code>\(HTMLText.escape($0))</code>" } ?? "—")</dd>"
            body += "<dt>Refresh token</dt><dd>\(apple.hasRefreshToken ? "kept" : "none")</dd>"
            body += "<dt>Last re-validation</dt><dd>\(ConsolePage.time(apple.validatedAt))</dd>"
            body += "<dt>Next re-validation</dt><dd>\(ConsolePage.time(apple.validationDueAt))</dd>"
        } else {
            body += "<dt>Apple ID</dt><dd>none linked</dd>"
        }
        body += "<dt>Revocations waiting</dt><dd>\(apple.pendingRevocations)"
        if let error = apple.lastRevocationError { body += #" <span class="muted">last error: \#(HTMLText.escape(error))</span>"# }
        body += "</dd></dl></section></div>"

        body += #"<section class="card"><div class="card-head"><h2>Sessions</h2>"#
        if !detail.sessions.isEmpty { body += ConsolePage.button("End all sessions", action: base + "/sessions/end", csrf: csrf, danger: true) }
        body += "</div>"
        if detail.sessions.isEmpty {
            body += #"<p class="muted">No live session.</p>"#
        } else {
            body += #"<table class="data"><thead><tr><th scope="col">Device</th><th scope="col">Method</th><th scope="col">From</th><th scope="col">Started</th><th scope="col">Last used</th><th scope="col">Ends</th><th scope="col"></th></tr></thead><tbody>"#
            for session in detail.sessions {
                body += "<tr><td>\(HTMLText.escape(session.deviceName ?? "Unknown device"))"
                if let agent = session.origin?.userAgent { body += #"<div class="muted agent">\#(HTMLText.escape(agent))</div>"# }
                body += "</td><td>\(session.origin.map { HTMLText.escape($0.method.rawValue) } ?? "—")</td>"
                body += "<td>\(HTMLText.escape(session.origin?.ip ?? "—"))</td><td>\(ConsolePage.time(session.createdAt))</td>"
                body += "<td>\(ConsolePage.ago(session.lastSeenAt, now: now))</td><td>\(ConsolePage.time(session.expiresAt))</td>"
                body += "<td>\(ConsolePage.button("End", action: base + "/sessions/" + session.id + "/end", csrf: csrf))</td></tr>"
            }
            body += "</tbody></table>"
        }
        body += "</section>"

        body += #"<section class="card"><div class="card-head"><h2>Activity</h2>"#
        body += #"<a href="/console/events?user_id=\#(FormURLEncoding.escape(user.id))">\#(detail.moreEvents ? "All events" : "As a list")</a></div>"#
        body += detail.events.isEmpty ? #"<p class="muted">Nothing recorded yet.</p>"# : ConsoleEventPages.table(detail.events, showUser: false, now: now)
        body += "</section>"

        body += #"<div class="columns"><section class="card"><h2>external_id</h2>"#
        body += #"<form method="post" action="\#(HTMLText.escape(base))/external-id" class="stack">\#(ConsolePage.hiddenToken(csrf))"#
        body += #"<label for="external_id">Your own id for this user (empty clears it)</label><input type="text" id="external_id" name="external_id" value="\#(HTMLText.escape(user.externalID ?? ""))" maxlength="256" spellcheck="false">"#
        body += #"<button type="submit">Save</button></form></section>"#
        body += #"<section class="card danger-zone"><h2>Delete this user</h2><p class="muted">Ends every session, revokes their Apple tokens and sends <code>user.deleted</code> (reason admin). It cannot be undone.</p>"#
        body += #"<form method="post" action="\#(HTMLText.escape(base))/delete" class="stack">\#(ConsolePage.hiddenToken(csrf))"#
        body += #"<label class="confirm"><input type="checkbox" name="confirm" value="yes"> I am sure</label><button type="submit" class="danger">Delete user</button></form></section></div>"#
        return ConsolePage.document(title: displayName(user) ?? user.id, section: .users, csrf: csrf, body: body)
    }

    static func displayName(_ user: UserRecord) -> String? {
        let name = [user.givenName, user.familyName].compactMap { $0 }.joined(separator: " ")
        return name.isEmpty ? nil : name
    }

    private static func email(_ user: UserRecord) -> String {
        guard let email = user.email else { return "—" }
        var html = HTMLText.escape(email)
        if user.isPrivateEmail { html += #" <span class="badge">relay</span>"# }
        html += user.emailVerified ? #" <span class="badge badge--ok">verified</span>"# : #" <span class="badge badge--warn">unproven</span>"#
        return html
    }

    private static func credential(_ user: UserRecord) -> String {
        user.appleCredential == .revoked ? #"<span class="badge badge--warn">revoked</span>"# : "authorized"
    }

    private static func forwarding(_ user: UserRecord) -> String {
        switch user.emailForwarding {
        case .disabled: #"<span class="badge badge--warn">disabled</span>"#
        case .enabled: "enabled"
        case nil: user.isPrivateEmail ? "enabled" : "— (not a relay address)"
        }
    }
}
