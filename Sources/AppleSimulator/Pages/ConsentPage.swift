/// The sheet a person sees at `/auth/authorize`: their Apple ID, the name to share and the
/// email choice (Share My Email / Hide My Email), then Continue or Cancel. Apple asks for the
/// name and the email choice only when the app requested those scopes; the simulator does
/// the same. Every control has a stable `id` for browser tests.
enum ConsentPage {
    static let defaultAppleID = "ada.lovelace@example.com"

    struct Values: Sendable {
        var appleID = ConsentPage.defaultAppleID
        var firstName = "Ada"
        var lastName = "Lovelace"
        var hideEmail = false
        var problem: String?
    }

    static func render(_ request: AuthorizeRequest, values: Values = Values()) -> String {
        var body = """
            \(HTML.logo)
            <h1>Sign in with Apple ID</h1>
            <p class="lead">Use your Apple ID to sign in to <span class="client" id="client">\(HTML.escape(request.clientID))</span>.</p>
            <form id="consent" method="post" action="/auth/authorize">
            \(request.carried.map { HTML.hiddenField($0.name, $0.value) }.joined(separator: "\n"))
            """
        if let problem = values.problem {
            body += #"<p class="detail" id="problem">\#(HTML.escape(problem))</p>"#
        }
        body += """
            <label for="email">Apple ID</label>
            <input type="email" id="email" name="email" value="\(HTML.escape(values.appleID))" autocomplete="username" required>
            """
        if request.wantsName {
            body += """
                <div class="row">
                <div><label for="first-name">First name</label>
                <input type="text" id="first-name" name="first_name" value="\(HTML.escape(values.firstName))" autocomplete="given-name"></div>
                <div><label for="last-name">Last name</label>
                <input type="text" id="last-name" name="last_name" value="\(HTML.escape(values.lastName))" autocomplete="family-name"></div>
                </div>
                """
        }
        if request.wantsEmail {
            body += """
                <fieldset>
                <legend>Email the app receives</legend>
                <label class="choice" for="share-email"><input type="radio" id="share-email" name="email_choice" value="share"\(values.hideEmail ? "" : " checked")>
                <span>Share My Email<small>The app gets your Apple ID email address.</small></span></label>
                <label class="choice" for="hide-email"><input type="radio" id="hide-email" name="email_choice" value="hide"\(values.hideEmail ? " checked" : "")>
                <span>Hide My Email<small>Forward to your inbox from a private relay address.</small></span></label>
                </fieldset>
                """
        }
        body += """
            <div class="actions">
            <button type="submit" class="primary" id="continue" name="action" value="continue">Continue</button>
            <button type="submit" class="secondary" id="cancel" name="action" value="cancel" formnovalidate>Cancel</button>
            </div>
            </form>
            """
        return HTML.document(title: "Sign in with Apple ID", body: body)
    }
}
