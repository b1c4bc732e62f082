import HTTPServer

/// The pages' stylesheet and script, served from `/static/` because the pages' CSP allows no
/// inline style or script. Their text is in `HTTP/Pages/Static/`, embedded in the binary (`EmbeddedFiles`).
enum StaticAssets {
    /// `siwa.css`: the pages' look, and the Sign in with Apple button's styles.
    static let stylesheet = String(decoding: EmbeddedFiles.siwaCSS, as: UTF8.self)

    /// `siwa.js`: Sign in with Apple JS in popup mode (loaded only when the server talks to the
    /// real Apple): Apple's page opens in a popup and hands the result back to this page, which
    /// forwards it to `POST /api/auth/apple`; a same-origin call also gets the session cookie. The
    /// nonce is fetched when the page loads, so the click itself calls `signIn()` at once (a popup
    /// opened after an await is blocked). Without Apple's script the button stays a link to the
    /// redirect flow.
    static let script = String(decoding: EmbeddedFiles.siwaJS, as: UTF8.self)

    static func serveStylesheet(_: HTTPRequest) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"], body: EmbeddedFiles.siwaCSS)
    }

    static func serveScript(_: HTTPRequest) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"], body: EmbeddedFiles.siwaJS)
    }

    /// `console.css`: the operators' console, its one stylesheet (the console allows no script).
    static func serveConsoleStylesheet(_: HTTPRequest) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"], body: EmbeddedFiles.consoleCSS)
    }
}
