/// Apple's answer to a malformed authorization request: a page shown to the person, with
/// nothing sent to the `redirect_uri` (TN3107; "Invalid response mode", F/660531).
enum ErrorPage {
    static func render(title: String, detail: String) -> String {
        HTML.document(
            title: title,
            body: """
                <div class="error" id="error">
                \(HTML.logo)
                <h1 id="error-title">\(HTML.escape(title))</h1>
                <p class="lead">Your request could not be completed because of an error. Please try again later.</p>
                <p class="detail" id="error-detail">\(HTML.escape(detail))</p>
                </div>
                """)
    }
}
