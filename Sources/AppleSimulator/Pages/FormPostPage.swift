/// The page that delivers an authorization with `response_mode=form_post`: a form the browser
/// POSTs to the `redirect_uri` as `application/x-www-form-urlencoded`, submitted at once by a
/// script, with a visible button for browsers that run none. Like Apple's, it is a cross-site
/// top-level POST, which SameSite=Lax cookies do not survive (APPLE.md §11.2).
enum FormPostPage {
    static func render(action: String, fields: [(name: String, value: String)]) -> String {
        let inputs = fields.map { HTML.hiddenField($0.name, $0.value) }.joined(separator: "\n")
        return HTML.document(
            title: "Signing in…",
            body: """
                \(HTML.logo)
                <h1>Signing in…</h1>
                <p class="lead">Returning you to the app.</p>
                <form id="apple-form-post" method="post" action="\(HTML.escape(action))" enctype="application/x-www-form-urlencoded">
                \(inputs)
                <div class="actions"><button type="submit" class="primary" id="continue">Continue</button></div>
                </form>
                <script>\(ContentSecurityPolicy.autoSubmitScript)</script>
                """)
    }
}
