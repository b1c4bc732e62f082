import HTTPServer
import Store
import WireFormat

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
        /// `siwa-server demo`: the button leads to the simulator's consent page; the
        /// simulator's mailbox page shows the mail it relayed and received.
        case demo(mailboxURL: String)
        /// Real Apple: the button is the redirect flow, and Sign in with Apple JS turns it
        /// into popup mode where the browser allows.
        case apple(clientID: String, redirectURI: String)
    }

    /// The sign-in page's email and password forms (SPEC §9).
    struct PasswordForms: Sendable {
        /// Bound to the browser's `siwa_form` cookie.
        let csrf: String
        /// Whether "Forgot your password?" can deliver a code (a `webhook_url` is set).
        let canReset: Bool
    }

    static func home(button: SignInButton, mode: SignInMode, notice: String?, passwordForms: PasswordForms) -> String {
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
        if case .demo(let mailboxURL) = mode {
            noticeHTML += #"<p class="muted">The webhook events a team's backend would receive are shown at <a href="\#(DemoWebhookReceiver.path)">\#(DemoWebhookReceiver.path)</a>.</p>"#
            noticeHTML += #"<p class="muted">Mail the demo sends is in the Apple ID simulator's <a id="demo-mailbox" href="\#(HTMLText.escape(mailboxURL))">mailbox</a>.</p>"#
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
                \(passwordSection(passwordForms))
                """,
            scripts: scripts)
    }

    /// Email and password beside the Apple button: sign in, create an account, forgot password.
    static func passwordSection(_ forms: PasswordForms) -> String {
        let token = csrfField(forms.csrf)
        let forgot = forms.canReset ? """
            <details class="card">
            <summary>Forgot your password?</summary>
            <form id="reset-request-form" class="stack" method="post" action="/auth/password/reset-request">\(token)
            <label>Email <input id="reset-email" type="email" name="email" autocomplete="email" required></label>
            <button id="reset-request" type="submit">Send a reset code</button>
            </form>
            </details>
            """ : ""
        return """
            <section class="card">
            <h2>Sign in with email</h2>
            <form id="password-sign-in-form" class="stack" method="post" action="/auth/password/sign-in">\(token)
            <label>Email <input id="sign-in-email" type="email" name="email" autocomplete="username" required></label>
            <label>Password <input id="sign-in-password" type="password" name="password" autocomplete="current-password" required></label>
            <button id="password-sign-in" type="submit">Sign in</button>
            </form>
            </section>
            <section class="card">
            <h2>Create an account</h2>
            <form id="sign-up-form" class="stack" method="post" action="/auth/password/sign-up">\(token)
            <label>First name <input id="sign-up-given-name" type="text" name="given_name" autocomplete="given-name"></label>
            <label>Email <input id="sign-up-email" type="email" name="email" autocomplete="email" required></label>
            <label>Password <input id="sign-up-password" type="password" name="password" autocomplete="new-password" minlength="10" required></label>
            <p class="muted">At least 10 characters, not a common password, and not your email's name.</p>
            <button id="sign-up" type="submit">Create account</button>
            </form>
            </section>
            \(forgot)
            """
    }

    /// What the sign-in page says for a form's `error=`.
    static func homeNotice(_ code: String) -> String? {
        switch code {
        case "invalid_credentials": "The email or password is wrong."
        case "too_many_attempts": "Too many failed attempts. Please try again in 15 minutes."
        case "account_exists": "An account already uses this email. Sign in with it instead."
        case "weak_password":
            "Choose another password: at least 10 characters, not one of the most common passwords, and not containing your email's name."
        case "invalid_request": "Enter an email address and a password."
        case "busy": "The server is busy. Please try again in a moment."
        case "invalid_grant": "This reset code is wrong, used or expired. Ask for a new one."
        case "not_configured": "Password resets are not set up on this server."
        default: nil
        }
    }

    /// The page a reset code leads to: the code (filled in from the link) and a new password.
    static func resetPassword(code: String?, csrf: String, notice: String?) -> String {
        let noticeHTML = notice.map { #"<p class="notice" role="alert">\#(HTMLText.escape($0))</p>"# } ?? ""
        return document(
            title: "Choose a new password — siwa-server",
            body: """
                <h1>Choose a new password</h1>
                \(noticeHTML)
                <section class="card">
                <form id="reset-form" class="stack" method="post" action="/auth/password/reset">\(csrfField(csrf))
                <label>Reset code <input id="reset-code" type="text" name="code" value="\(HTMLText.escape(code ?? ""))" autocomplete="one-time-code" required></label>
                <label>New password <input id="reset-password" type="password" name="new_password" autocomplete="new-password" minlength="10" required></label>
                <button id="reset" type="submit">Set password</button>
                </form>
                </section>
                <p><a href="/">Back to sign in</a></p>
                """)
    }

    /// What the verification page says after its button was pressed.
    enum VerifyOutcome {
        case verified, invalidCode, failed
    }

    /// The page a verification code leads to: a button that sends the code (filled in from
    /// the link), then what came of it.
    static func verifyEmail(code: String?, csrf: String, outcome: VerifyOutcome?) -> String {
        let content: String
        switch outcome {
        case .verified:
            content = #"<p id="verified" class="notice" role="status">Your email address is verified. You can close this page.</p>"#
        case .invalidCode:
            content = #"<p class="notice" role="alert">This verification code is wrong, used or expired. Sign in and ask for a new one from your account page.</p>"#
        case .failed:
            content = #"<p class="notice" role="alert">Your email address could not be verified. Please try again in a moment.</p>"#
        case nil:
            content = """
                <section class="card">
                <p>Press the button to confirm that this email address is yours.</p>
                <p class="muted">If you did not create an account with this address, leave this page: the button
                would confirm someone else's account.</p>
                <form id="verify-form" class="stack" method="post" action="/auth/email/verify">\(csrfField(csrf))
                <input type="hidden" name="code" value="\(HTMLText.escape(code ?? ""))">
                <button id="verify" type="submit">Verify my email address</button>
                </form>
                </section>
                """
        }
        return document(
            title: "Verify your email address — siwa-server",
            body: """
                <h1>Verify your email address</h1>
                \(content)
                <p><a href="/">Back to sign in</a></p>
                """)
    }

    // MARK: - Account page

    static func account(
        user: UserRecord, sessions: [SessionRecord], currentSessionID: String, csrf: String, notice: String?, problem: String? = nil
    ) -> String {
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
        var noticeHTML = notice.map { #"<p class="notice notice--ok" role="status">\#(HTMLText.escape($0))</p>"# } ?? ""
        noticeHTML += problem.map { #"<p id="account-problem" class="notice" role="alert">\#(HTMLText.escape($0))</p>"# } ?? ""
        let lead = user.appleSub == nil ? "Signed in with your email and password." : "Signed in with Apple."
        return document(
            title: "Account — siwa-server",
            body: """
                <h1 id="greeting">\(HTMLText.escape(greeting))</h1>
                <p class="lead">\(lead)</p>
                \(noticeHTML)
                <section class="card">
                <h2>Profile</h2>
                <dl class="profile">
                <dt>Name</dt><dd id="profile-name">\(name.isEmpty ? #"<span class="muted">not shared</span>"# : HTMLText.escape(name))</dd>
                <dt>Email</dt><dd id="profile-email">\(email)</dd>
                <dt>Email forwarding</dt><dd>\(forwarding)</dd>
                <dt>Apple ID (team-scoped)</dt><dd><code>\(HTMLText.escape(user.appleSub ?? "—"))</code></dd>
                <dt>Member since</dt><dd>\(RFC3339.format(user.createdAt))</dd>
                </dl>
                </section>
                \(signInMethods(user, csrf: csrf))
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

    /// The user's ways in, with the forms that add or remove them (SPEC §9). Removing the last
    /// one is offered too: the server refuses it and says why.
    static func signInMethods(_ user: UserRecord, csrf: String) -> String {
        let token = csrfField(csrf)
        let apple: String
        if user.appleSub != nil {
            let state = user.appleCredential == .authorized ? "added" : "added (authorization revoked at Apple: sign in with Apple again)"
            let remove = #"<form class="inline" method="post" action="/account/apple/remove">\#(token)<button id="remove-apple" class="small" type="submit">Remove</button></form>"#
            apple = #"<li id="method-apple"><strong>Sign in with Apple</strong> <span class="badge">\#(state)</span> \#(remove)</li>"#
        } else {
            apple = """
                <li id="method-apple"><strong>Sign in with Apple</strong> <span class="muted">not added</span>
                <a id="add-apple" class="button small" href="/auth/apple/link?csrf=\(HTMLText.escape(FormURLEncoding.escape(csrf)))">Add Sign in with Apple</a></li>
                """
        }
        let password: String
        if user.hasPassword {
            let remove = #"<form class="inline" method="post" action="/account/password/remove">\#(token)<button id="remove-password" class="small" type="submit">Remove</button></form>"#
            password = """
                <li id="method-password"><strong>Password</strong> <span class="badge">set</span> \(remove)
                <form id="change-password-form" class="stack" method="post" action="/account/password">\(token)
                <label>Current password <input id="current-password" type="password" name="current_password" autocomplete="current-password" required></label>
                <label>New password <input id="new-password" type="password" name="new_password" autocomplete="new-password" minlength="10" required></label>
                <button id="change-password" type="submit">Change password</button>
                </form></li>
                """
        } else {
            let on = user.email.map { " for \(HTMLText.escape($0))" } ?? ""
            password = """
                <li id="method-password"><strong>Password</strong> <span class="muted">not set</span>
                <form id="set-password-form" class="stack" method="post" action="/account/password">\(token)
                <label>New password\(on) <input id="new-password" type="password" name="new_password" autocomplete="new-password" minlength="10" required></label>
                <button id="set-password" type="submit">Set password</button>
                </form></li>
                """
        }
        return """
            <section class="card">
            <h2>Sign-in methods</h2>
            <ul id="sign-in-methods" class="methods">
            \(apple)
            \(password)
            </ul>
            <p class="muted">Adding a method needs a sign-in in the last 10 minutes; your only way to sign in cannot be removed.</p>
            </section>
            """
    }

    /// What the account page says for a form's `error=`.
    static func accountProblem(_ code: String) -> String? {
        switch code {
        case "reauthentication_required": "For your security, sign out and sign in again, then make this change within 10 minutes."
        case "invalid_credentials": "Your current password is wrong."
        case "weak_password":
            "Choose another password: at least 10 characters, not one of the most common passwords, and not containing your email's name."
        case "last_sign_in_method": "This is your only way to sign in. Add another method before removing it."
        case "account_exists": "Another account uses your email address."
        case "too_many_attempts": "Too many failed attempts. Please try again in 15 minutes."
        case "invalid_request": "Your account has no email address to sign in with."
        case "busy": "The server is busy. Please try again in a moment."
        default: nil
        }
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
