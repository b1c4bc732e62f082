import HTTPServer
import Store

/// The HTML pages: `/`, `/account` and the error page. Every value from a user or from Apple
/// is escaped (Apple passes the name a person typed through unchecked, APPLE.md §1.2).
enum Pages {
    /// SPEC §7 "Web": the pages' Content-Security-Policy, exactly.
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self' https://appleid.cdn-apple.com; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    static let appleScriptURL = "https://appleid.cdn-apple.com/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js"

    /// An HTML response with the pages' security headers; never cached (they show an account).
    static func response(_ html: String, status: Int = 200, headers extra: [(String, String)] = []) -> HTTPResponse {
        var headers: HTTPHeaders = [
            "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": contentSecurityPolicy,
            "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
        ]
        for (name, value) in extra { headers.add(name, value) }
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }

    /// A 303 to `location` (after a form POST, so the browser follows with a GET).
    static func seeOther(_ location: String, headers extra: [(String, String)] = []) -> HTTPResponse {
        var response = response("", status: 303, headers: [("Location", location)] + extra)
        response.headers.remove("Content-Type")
        return response
    }

    static func document(title: String, body: String, scripts: [String] = []) -> String {
        let scriptTags = scripts.map { #"<script src="\#(HTMLText.escape($0))" defer></script>"# }.joined(separator: "\n")
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="robots" content="noindex">
            <title>\(HTMLText.escape(title))</title>
            <link rel="stylesheet" href="/static/siwa.css">
            \(scriptTags)
            </head>
            <body>
            <main>
            \(body)
            </main>
            </body>
            </html>
            """
    }

    // MARK: - Sign-in page

    /// How `/` signs people in.
    enum SignInMode: Sendable {
        /// `siwa-server demo`: the button leads to the simulator's consent page.
        case demo
        /// Real Apple: the button is the redirect flow, and Sign in with Apple JS turns it
        /// into popup mode where the browser allows.
        case apple(clientID: String, redirectURI: String)
    }

    static func home(button: SignInButton, mode: SignInMode, notice: String?) -> String {
        var attributes = ""
        var scripts: [String] = []
        var lead = "Sign in with your Apple Account. Your name and email are shared only if you choose to."
        switch mode {
        case .demo:
            lead = "This is the demo: the button leads to an offline Apple ID simulator, so no Apple Account is needed."
        case .apple(let clientID, let redirectURI):
            attributes = #" data-client-id="\#(HTMLText.escape(clientID))" data-redirect-uri="\#(HTMLText.escape(redirectURI))""#
            scripts = [appleScriptURL, "/static/siwa.js"]
        }
        var link = button.html(href: "/auth/apple/login")
        if !attributes.isEmpty, let end = link.firstIndex(of: ">") { link.insert(contentsOf: attributes, at: end) }
        var noticeHTML = notice.map { #"<p class="notice" role="status">\#(HTMLText.escape($0))</p>"# } ?? ""
        if case .demo = mode {
            noticeHTML += #"<p class="muted">The webhook events a team's backend would receive are shown at <a href="\#(DemoWebhookReceiver.path)">\#(DemoWebhookReceiver.path)</a>.</p>"#
        }
        return document(
            title: "Sign in — siwa-server",
            body: """
                <h1>Sign in</h1>
                <p class="lead">\(HTMLText.escape(lead))</p>
                \(noticeHTML)
                <div class="card sign-in">
                \(link)
                <p id="sign-in-message" class="notice" role="alert" hidden></p>
                </div>
                """,
            scripts: scripts)
    }

    // MARK: - Account page

    static func account(user: UserRecord, sessions: [SessionRecord], currentSessionID: String, csrf: String, notice: String?) -> String {
        let name = [user.givenName, user.familyName].compactMap { $0 }.joined(separator: " ")
        let greeting = name.isEmpty ? "Your account" : "Hello, \(name)"
        var email = user.email.map(HTMLText.escape) ?? #"<span class="muted">not shared</span>"#
        if user.isPrivateEmail { email += #" <span class="badge">Hide My Email relay</span>"# }
        if user.email != nil, !user.emailVerified { email += #" <span class="badge badge--warn">unverified</span>"# }
        let forwarding = user.emailForwarding.map { $0 == .enabled ? "forwarding to you" : "forwarding turned off" } ?? "—"
        let rows = sessions.map { session -> String in
            let current = session.id == currentSessionID
            let device = session.deviceName.map(HTMLText.escape) ?? #"<span class="muted">unnamed</span>"#
            let end = """
                <form class="inline" method="post" action="/account/sessions/\(HTMLText.escape(session.id))/end">\
                \(csrfField(csrf))<button class="small" type="submit">\(current ? "Sign out" : "End")</button></form>
                """
            return """
                <tr data-session-id="\(HTMLText.escape(session.id))"><td>\(device)\(current ? #" <span class="badge">this browser</span>"# : "")</td>\
                <td>\(RFC3339.format(session.createdAt))</td><td>\(RFC3339.format(session.lastSeenAt))</td>\
                <td>\(RFC3339.format(session.expiresAt))</td><td>\(end)</td></tr>
                """
        }.joined(separator: "\n")
        let noticeHTML = notice.map { #"<p class="notice notice--ok" role="status">\#(HTMLText.escape($0))</p>"# } ?? ""
        return document(
            title: "Account — siwa-server",
            body: """
                <h1 id="greeting">\(HTMLText.escape(greeting))</h1>
                <p class="lead">Signed in with Apple.</p>
                \(noticeHTML)
                <section class="card">
                <h2>Profile</h2>
                <dl class="profile">
                <dt>Name</dt><dd id="profile-name">\(name.isEmpty ? #"<span class="muted">not shared</span>"# : HTMLText.escape(name))</dd>
                <dt>Email</dt><dd id="profile-email">\(email)</dd>
                <dt>Email forwarding</dt><dd>\(forwarding)</dd>
                <dt>Apple ID (team-scoped)</dt><dd><code>\(HTMLText.escape(user.appleSub ?? "—"))</code></dd>
                <dt>Sign in with Apple</dt><dd>\(user.appleCredential == .authorized ? "authorized" : "revoked")</dd>
                <dt>Member since</dt><dd>\(RFC3339.format(user.createdAt))</dd>
                </dl>
                </section>
                <section class="card">
                <h2>Sessions</h2>
                <table id="sessions">
                <thead><tr><th>Device</th><th>Signed in</th><th>Last seen</th><th>Expires</th><th></th></tr></thead>
                <tbody>
                \(rows)
                </tbody>
                </table>
                <div class="actions">
                <form class="inline" method="post" action="/account/logout">\(csrfField(csrf))<button id="sign-out" type="submit">Sign out</button></form>
                <form class="inline" method="post" action="/account/sessions/end-others">\(csrfField(csrf))<button id="end-others" type="submit">End other sessions</button></form>
                </div>
                </section>
                <section class="card">
                <h2>Delete account</h2>
                <p class="muted">Your account and every session end at once, and your Sign in with Apple authorization is revoked at Apple.</p>
                <form method="post" action="/account/delete">\(csrfField(csrf))
                <div class="actions">
                <label class="confirm"><input id="confirm-delete" type="checkbox" name="confirm" value="yes" required> I understand this cannot be undone</label>
                <button id="delete-account" class="danger" type="submit">Delete account</button>
                </div>
                </form>
                </section>
                """)
    }

    static func csrfField(_ token: String) -> String {
        #"<input type="hidden" name="csrf" value="\#(HTMLText.escape(token))">"#
    }

    // MARK: - Errors

    /// A failed sign-in or a refused form: what happened, and the way back.
    static func error(_ status: Int, title: String, message: String) -> HTTPResponse {
        response(document(
            title: "\(title) — siwa-server",
            body: """
                <h1>\(HTMLText.escape(title))</h1>
                <div class="card">
                <p id="error-message">\(HTMLText.escape(message))</p>
                <p><a href="/">Back to sign in</a></p>
                </div>
                """), status: status)
    }
}
