import Accounts
import HTTPServer
import MailTemplates
import Store
import WireFormat

/// The HTML pages: `/`, `/account`, the reset and verification pages and the error page, in the
/// request's language (`PageLanguage`), their words from the embedded strings files
/// (`PageWords`). Every value from a user or from Apple is escaped (Apple passes the name a
/// person typed through unchecked, APPLE.md §1.2).
enum Pages {
    /// docs/reference/http-api.md "Web": the pages' Content-Security-Policy, exactly.
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self' https://appleid.cdn-apple.com; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    /// Sign in with Apple JS in the page's language (its popup follows it).
    static func appleScriptURL(_ language: Language) -> String {
        let locale = language == .ko ? "ko_KR" : "en_US"
        return "https://appleid.cdn-apple.com/appleauth/static/jsapi/appleid/1/\(locale)/appleid.auth.js"
    }

    /// An HTML page with the pages' security headers; never cached (they show an account), and
    /// marked with its language and `Vary: Accept-Language`, so no cache hands one language's
    /// page to a browser that asked for the other.
    static func response(_ html: String, language: PageLanguage, status: Int = 200, headers extra: [(String, String)] = []) -> HTTPResponse {
        var response = secured(html, status: status, headers: extra)
        response.headers.add("Content-Language", language.language.rawValue)
        response.headers.add("Vary", "Accept-Language")
        return response
    }

    /// A 303 to `location` (after a form POST, so the browser follows with a GET).
    static func seeOther(_ location: String, headers extra: [(String, String)] = []) -> HTTPResponse {
        var response = secured("", status: 303, headers: [("Location", location)] + extra)
        response.headers.remove("Content-Type")
        return response
    }

    /// A 303 to a page of this site, carrying the language `request` chose with `?lang=`.
    static func seeOther(_ location: String, for request: HTTPRequest, headers extra: [(String, String)] = []) -> HTTPResponse {
        seeOther(PageLanguage(request).carried(location), headers: extra)
    }

    private static func secured(_ html: String, status: Int, headers extra: [(String, String)]) -> HTTPResponse {
        var headers: HTTPHeaders = [
            "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": contentSecurityPolicy,
            "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
        ]
        for (name, value) in extra { headers.add(name, value) }
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }

    /// - Parameter here: the page's own path and query, for the language switch; nil for a page
    ///   that cannot be fetched again (an error answering a form).
    static func document(title: PageText, body: String, language: PageLanguage, here: String?, scripts: [String] = []) -> String {
        let scriptTags = scripts.map { #"<script src="\#(HTMLText.escape($0))" defer></script>"# }.joined(separator: "\n")
        let title = language.text(title) + " — " + language.text(.siteName)
        return document(title: title, body: body, language: language, here: here, scriptTags: scriptTags)
    }

    /// A page whose words are not in the strings files (the demo's webhook page, in English).
    static func document(title: String, body: String, language: PageLanguage, here: String?, scriptTags: String = "") -> String {
        """
        <!DOCTYPE html>
        <html lang="\(language.language.rawValue)">
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
        \(here.map { languageSwitch(language, here: $0) } ?? "")
        \(body)
        </main>
        </body>
        </html>
        """
    }

    /// Links to this page in each language (`?lang=`), each named in its own language.
    static func languageSwitch(_ language: PageLanguage, here: String) -> String {
        let separator = here.contains("?") ? "&" : "?"
        let links = [(Language.en, PageText.languageEnglish), (.ko, .languageKorean)].map { other, name in
            let current = other == language.language ? #" aria-current="true""# : ""
            let href = HTMLText.escape(here + separator + "lang=" + other.rawValue)
            return #"<a href="\#(href)" hreflang="\#(other.rawValue)" lang="\#(other.rawValue)"\#(current)>\#(PageWords.html(name, other))</a>"#
        }
        return #"<nav class="languages" aria-label="\#(language.html(.languageSwitch))">\#(links.joined(separator: " "))</nav>"#
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

    /// The sign-in page's email and password forms (docs/guides/passwords-and-email.md).
    struct PasswordForms: Sendable {
        /// Bound to the browser's `siwa_form` cookie.
        let csrf: String
        /// Whether "Forgot your password?" can deliver a code (`smtp_url` or `webhook_url` is set).
        let canReset: Bool
    }

    static func home(
        button: SignInButton, mode: SignInMode, notice: PageText?, passwordForms: PasswordForms, language: PageLanguage, here: String
    ) -> String {
        var attributes = ""
        var scripts: [String] = []
        var lead = PageText.homeLead
        switch mode {
        case .demo:
            lead = .homeLeadDemo
        case .apple(let clientID, let redirectURI):
            attributes = #" data-client-id="\#(HTMLText.escape(clientID))" data-redirect-uri="\#(HTMLText.escape(redirectURI))""#
            scripts = [appleScriptURL(language.language), "/static/siwa.js"]
        }
        var link = button.html(href: language.carried("/auth/apple/login"), language: language.language)
        if !attributes.isEmpty, let end = link.firstIndex(of: ">") { link.insert(contentsOf: attributes, at: end) }
        var noticeHTML = notice.map { #"<p class="notice" role="status">\#(language.html($0))</p>"# } ?? ""
        if case .demo(let mailboxURL) = mode {
            let path = HTMLText.escape(DemoWebhookReceiver.path)
            noticeHTML += #"<p class="muted">\#(language.html(.homeDemoWebhooks, markup: ["link": #"<a href="\#(path)">\#(path)</a>"#]))</p>"#
            let mailbox = #"<a id="demo-mailbox" href="\#(HTMLText.escape(mailboxURL))">\#(language.html(.homeDemoMailboxLink))</a>"#
            noticeHTML += #"<p class="muted">\#(language.html(.homeDemoMailbox, markup: ["link": mailbox]))</p>"#
        }
        return document(
            title: .homeTitle,
            body: """
                <h1>\(language.html(.homeTitle))</h1>
                <p class="lead">\(language.html(lead))</p>
                \(noticeHTML)
                <div class="card sign-in">
                \(link)
                <p id="sign-in-message" class="notice" role="alert" data-failed="\(language.html(.appleFailed))" hidden></p>
                </div>
                \(passwordSection(passwordForms, language: language))
                """,
            language: language, here: here, scripts: scripts)
    }

    /// Email and password beside the Apple button: sign in, create an account, forgot password.
    static func passwordSection(_ forms: PasswordForms, language: PageLanguage) -> String {
        let token = csrfField(forms.csrf)
        let forgot = forms.canReset ? """
            <details class="card">
            <summary>\(language.html(.forgotPassword))</summary>
            <form id="reset-request-form" class="stack" method="post" action="\(action("/auth/password/reset-request", language))">\(token)
            <label>\(language.html(.formEmail)) <input id="reset-email" type="email" name="email" autocomplete="email" required></label>
            <button id="reset-request" type="submit">\(language.html(.sendResetCode))</button>
            </form>
            </details>
            """ : ""
        return """
            <section class="card">
            <h2>\(language.html(.signInWithEmail))</h2>
            <form id="password-sign-in-form" class="stack" method="post" action="\(action("/auth/password/sign-in", language))">\(token)
            <label>\(language.html(.formEmail)) <input id="sign-in-email" type="email" name="email" autocomplete="username" required></label>
            <label>\(language.html(.formPassword)) <input id="sign-in-password" type="password" name="password" autocomplete="current-password" required></label>
            <button id="password-sign-in" type="submit">\(language.html(.signInButton))</button>
            </form>
            </section>
            <section class="card">
            <h2>\(language.html(.createAccountHeading))</h2>
            <form id="sign-up-form" class="stack" method="post" action="\(action("/auth/password/sign-up", language))">\(token)
            <label>\(language.html(.formGivenName)) <input id="sign-up-given-name" type="text" name="given_name" autocomplete="given-name"></label>
            <label>\(language.html(.formEmail)) <input id="sign-up-email" type="email" name="email" autocomplete="email" required></label>
            <label>\(language.html(.formPassword)) <input id="sign-up-password" type="password" name="password" autocomplete="new-password" minlength="10" required></label>
            <p class="muted">\(language.html(.passwordRules))</p>
            <button id="sign-up" type="submit">\(language.html(.createAccountButton))</button>
            </form>
            </section>
            \(forgot)
            """
    }

    /// What the sign-in page says for a form's `error=`.
    static func homeNotice(_ code: String) -> PageText? {
        switch code {
        case "invalid_credentials": .noticeInvalidCredentials
        case "too_many_attempts": .noticeTooManyAttempts
        case "account_exists": .noticeAccountExists
        case "weak_password": .noticeWeakPassword
        case "invalid_request": .noticeInvalidRequest
        case "busy": .noticeBusy
        case "invalid_grant": .noticeInvalidGrant
        case "not_configured": .noticeNotConfigured
        default: nil
        }
    }

    /// The page a reset code leads to: the code (filled in from the link) and a new password.
    static func resetPassword(code: String?, csrf: String, notice: PageText?, language: PageLanguage, here: String) -> String {
        let noticeHTML = notice.map { #"<p class="notice" role="alert">\#(language.html($0))</p>"# } ?? ""
        return document(
            title: .resetTitle,
            body: """
                <h1>\(language.html(.resetTitle))</h1>
                \(noticeHTML)
                <section class="card">
                <form id="reset-form" class="stack" method="post" action="\(action("/auth/password/reset", language))">\(csrfField(csrf))
                <label>\(language.html(.resetCode)) <input id="reset-code" type="text" name="code" value="\(HTMLText.escape(code ?? ""))" autocomplete="one-time-code" required></label>
                <label>\(language.html(.newPassword)) <input id="reset-password" type="password" name="new_password" autocomplete="new-password" minlength="10" required></label>
                <button id="reset" type="submit">\(language.html(.setPasswordButton))</button>
                </form>
                </section>
                \(backToSignIn(language))
                """,
            language: language, here: here)
    }

    /// What the verification page says after its button was pressed.
    enum VerifyOutcome {
        case verified, invalidCode, failed
    }

    /// The page a verification code leads to: a button that sends the code (filled in from
    /// the link), then what came of it.
    static func verifyEmail(code: String?, csrf: String, outcome: VerifyOutcome?, language: PageLanguage, here: String) -> String {
        let content: String
        switch outcome {
        case .verified:
            content = #"<p id="verified" class="notice" role="status">\#(language.html(.verifyDone))</p>"#
        case .invalidCode:
            content = #"<p class="notice" role="alert">\#(language.html(.verifyInvalidCode))</p>"#
        case .failed:
            content = #"<p class="notice" role="alert">\#(language.html(.verifyFailed))</p>"#
        case nil:
            content = """
                <section class="card">
                <p>\(language.html(.verifyPrompt))</p>
                <p class="muted">\(language.html(.verifyWarning))</p>
                <form id="verify-form" class="stack" method="post" action="\(action("/auth/email/verify", language))">\(csrfField(csrf))
                <input type="hidden" name="code" value="\(HTMLText.escape(code ?? ""))">
                <button id="verify" type="submit">\(language.html(.verifyButton))</button>
                </form>
                </section>
                """
        }
        return document(
            title: .verifyTitle,
            body: """
                <h1>\(language.html(.verifyTitle))</h1>
                \(content)
                \(backToSignIn(language))
                """,
            language: language, here: here)
    }

    // MARK: - Account page

    static func account(
        user: UserRecord, sessions: [SessionRecord], currentSessionID: String, csrf: String, notice: PageText?, problem: PageText? = nil,
        language: PageLanguage, here: String
    ) -> String {
        let name = [user.givenName, user.familyName].compactMap { $0 }.joined(separator: " ")
        let greeting = name.isEmpty ? language.html(.accountGreeting) : language.html(.accountHello, ["name": name])
        let notShared = #"<span class="muted">\#(language.html(.notShared))</span>"#
        var email = user.email.map(HTMLText.escape) ?? notShared
        if user.isPrivateEmail { email += #" <span class="badge">\#(language.html(.badgeRelay))</span>"# }
        if user.email != nil, !user.emailVerified { email += #" <span class="badge badge--warn">\#(language.html(.badgeUnverified))</span>"# }
        let forwarding = user.emailForwarding.map { language.html($0 == .enabled ? .forwardingEnabled : .forwardingDisabled) } ?? "—"
        let rows = sessions.map { session -> String in
            let current = session.id == currentSessionID
            let device = session.deviceName.map(HTMLText.escape) ?? #"<span class="muted">\#(language.html(.sessionUnnamed))</span>"#
            let end = """
                <form class="inline" method="post" action="\(action("/account/sessions/\(session.id)/end", language))">\
                \(csrfField(csrf))<button class="small" type="submit">\(language.html(current ? .signOut : .sessionEnd))</button></form>
                """
            let badge = current ? #" <span class="badge">\#(language.html(.sessionThisBrowser))</span>"# : ""
            // How and from where, so a person can tell a device that is not theirs.
            let from = session.origin.map { origin in
                let method: PageText = switch origin.method {
                case .apple: .sessionMethodApple
                case .password: .sessionMethodPassword
                case .upgrade: .sessionMethodUpgrade
                case .exchange: .sessionMethodExchange
                case .web: .sessionMethodWeb
                }
                let place = language.html(method) + (origin.ip.map { " · " + HTMLText.escape($0) } ?? "")
                let agent = origin.userAgent.map { #"<br><span class="muted">\#(HTMLText.escape($0))</span>"# } ?? ""
                return place + agent
            } ?? "—"
            return """
                <tr data-session-id="\(HTMLText.escape(session.id))"><td>\(device)\(badge)</td>\
                <td class="session-from">\(from)</td><td>\(RFC3339.format(session.createdAt))</td><td>\(RFC3339.format(session.lastSeenAt))</td>\
                <td>\(RFC3339.format(session.expiresAt))</td><td>\(end)</td></tr>
                """
        }.joined(separator: "\n")
        var noticeHTML = notice.map { #"<p class="notice notice--ok" role="status">\#(language.html($0))</p>"# } ?? ""
        noticeHTML += problem.map { #"<p id="account-problem" class="notice" role="alert">\#(language.html($0))</p>"# } ?? ""
        let lead = language.html(user.appleSub == nil ? .accountLeadPassword : .accountLeadApple)
        return document(
            title: .accountTitle,
            body: """
                <h1 id="greeting">\(greeting)</h1>
                <p class="lead">\(lead)</p>
                \(noticeHTML)
                <section class="card">
                <h2>\(language.html(.profileHeading))</h2>
                <dl class="profile">
                <dt>\(language.html(.profileName))</dt><dd id="profile-name">\(name.isEmpty ? notShared : HTMLText.escape(name))</dd>
                <dt>\(language.html(.profileEmail))</dt><dd id="profile-email">\(email)</dd>
                <dt>\(language.html(.profileForwarding))</dt><dd>\(forwarding)</dd>
                <dt>\(language.html(.profileAppleID))</dt><dd><code>\(HTMLText.escape(user.appleSub ?? "—"))</code></dd>
                <dt>\(language.html(.profileMemberSince))</dt><dd>\(RFC3339.format(user.createdAt))</dd>
                </dl>
                </section>
                \(signInMethods(user, csrf: csrf, language: language))
                <section class="card">
                <h2>\(language.html(.sessionsHeading))</h2>
                <table id="sessions">
                <thead><tr><th>\(language.html(.sessionDevice))</th><th>\(language.html(.sessionFrom))</th><th>\(language.html(.sessionSignedIn))</th>\
                <th>\(language.html(.sessionLastSeen))</th><th>\(language.html(.sessionExpires))</th><th></th></tr></thead>
                <tbody>
                \(rows)
                </tbody>
                </table>
                <div class="actions">
                <form class="inline" method="post" action="\(action("/account/logout", language))">\(csrfField(csrf))\
                <button id="sign-out" type="submit">\(language.html(.signOut))</button></form>
                <form class="inline" method="post" action="\(action("/account/sessions/end-others", language))">\(csrfField(csrf))\
                <button id="end-others" type="submit">\(language.html(.endOtherSessions))</button></form>
                </div>
                </section>
                <section class="card">
                <h2>\(language.html(.deleteHeading))</h2>
                <p class="muted">\(language.html(.deleteExplanation))</p>
                <form method="post" action="\(action("/account/delete", language))">\(csrfField(csrf))
                <div class="actions">
                <label class="confirm"><input id="confirm-delete" type="checkbox" name="confirm" value="yes" required> \(language.html(.deleteConfirm))</label>
                <button id="delete-account" class="danger" type="submit">\(language.html(.deleteButton))</button>
                </div>
                </form>
                </section>
                """,
            language: language, here: here)
    }

    /// The user's ways in, with the forms that add or remove them (docs/guides/passwords-and-email.md). Removing the last
    /// one is offered too: the server refuses it and says why.
    static func signInMethods(_ user: UserRecord, csrf: String, language: PageLanguage) -> String {
        let token = csrfField(csrf)
        let apple: String
        if user.appleSub != nil {
            let state = language.html(user.appleCredential == .authorized ? .methodAdded : .methodAddedRevoked)
            let remove = """
                <form class="inline" method="post" action="\(action("/account/apple/remove", language))">\(token)\
                <button id="remove-apple" class="small" type="submit">\(language.html(.methodRemove))</button></form>
                """
            apple = #"<li id="method-apple"><strong>\#(language.html(.methodApple))</strong> <span class="badge">\#(state)</span> \#(remove)</li>"#
        } else {
            let link = language.carried("/auth/apple/link?csrf=" + FormURLEncoding.escape(csrf))
            apple = """
                <li id="method-apple"><strong>\(language.html(.methodApple))</strong> <span class="muted">\(language.html(.methodNotAdded))</span>
                <a id="add-apple" class="button small" href="\(HTMLText.escape(link))">\(language.html(.methodAddApple))</a></li>
                """
        }
        let password: String
        if user.hasPassword {
            let remove = """
                <form class="inline" method="post" action="\(action("/account/password/remove", language))">\(token)\
                <button id="remove-password" class="small" type="submit">\(language.html(.methodRemove))</button></form>
                """
            password = """
                <li id="method-password"><strong>\(language.html(.methodPassword))</strong> <span class="badge">\(language.html(.methodSet))</span> \(remove)
                <form id="change-password-form" class="stack" method="post" action="\(action("/account/password", language))">\(token)
                <label>\(language.html(.currentPassword)) <input id="current-password" type="password" name="current_password" autocomplete="current-password" required></label>
                <label>\(language.html(.newPassword)) <input id="new-password" type="password" name="new_password" autocomplete="new-password" minlength="10" required></label>
                <button id="change-password" type="submit">\(language.html(.changePasswordButton))</button>
                </form></li>
                """
        } else {
            let label = user.email.map { language.html(.newPasswordFor, ["email": $0]) } ?? language.html(.newPassword)
            password = """
                <li id="method-password"><strong>\(language.html(.methodPassword))</strong> <span class="muted">\(language.html(.methodNotSet))</span>
                <form id="set-password-form" class="stack" method="post" action="\(action("/account/password", language))">\(token)
                <label>\(label) <input id="new-password" type="password" name="new_password" autocomplete="new-password" minlength="10" required></label>
                <button id="set-password" type="submit">\(language.html(.setPasswordButton))</button>
                </form></li>
                """
        }
        return """
            <section class="card">
            <h2>\(language.html(.methodsHeading))</h2>
            <ul id="sign-in-methods" class="methods">
            \(apple)
            \(password)
            </ul>
            <p class="muted">\(language.html(.methodsNote))</p>
            </section>
            """
    }

    /// What the account page says for a form's `error=`.
    static func accountProblem(_ code: String) -> PageText? {
        switch code {
        case "reauthentication_required": .problemReauthenticate
        case "invalid_credentials": .problemInvalidCredentials
        case "weak_password": .noticeWeakPassword
        case "last_sign_in_method": .problemLastSignInMethod
        case "account_exists": .problemAccountExists
        case "too_many_attempts": .noticeTooManyAttempts
        case "invalid_request": .problemInvalidRequest
        case "busy": .noticeBusy
        case "email_unverified": .problemEmailUnverified
        default: nil
        }
    }

    static func csrfField(_ token: String) -> String {
        #"<input type="hidden" name="csrf" value="\#(HTMLText.escape(token))">"#
    }

    /// A form's `action`, escaped, carrying a chosen language so that its answer keeps it.
    static func action(_ path: String, _ language: PageLanguage) -> String {
        HTMLText.escape(language.carried(path))
    }

    static func backToSignIn(_ language: PageLanguage) -> String {
        #"<p><a href="\#(HTMLText.escape(language.carried("/")))">\#(language.html(.backToSignIn))</a></p>"#
    }

    // MARK: - Errors

    /// A failed sign-in or a refused form: what happened, and the way back.
    static func error(_ status: Int, title: PageText, message: PageText, language: PageLanguage) -> HTTPResponse {
        response(
            document(
                title: title,
                body: """
                    <h1>\(language.html(title))</h1>
                    <div class="card">
                    <p id="error-message">\(language.html(message))</p>
                    \(backToSignIn(language))
                    </div>
                    """,
                language: language, here: nil),
            language: language, status: status)
    }
}
