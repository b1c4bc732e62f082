import HTTPServer

/// Escaping and the shared look of the simulator's pages: self-contained (no external
/// resources), a calm sheet in the system font.
enum HTML {
    static func escape(_ text: String) -> String {
        HTMLText.escape(text)
    }

    static func hiddenField(_ name: String, _ value: String) -> String {
        let name = escape(name)
        return #"<input type="hidden" id="\#(name)" name="\#(name)" value="\#(escape(value))">"#
    }

    /// `wide` for pages of lists (the mailbox) rather than a sign-in sheet.
    static func document(title: String, body: String, wide: Bool = false) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex">
        <title>\(escape(title))</title>
        <style>\(style)</style>
        </head>
        <body>
        <main class="sheet\(wide ? " wide" : "")">
        \(body)
        </main>
        <p class="footnote">Apple ID simulator — for development and tests only. No Apple account is used.</p>
        </body>
        </html>
        """
    }

    static let logo = """
        <svg class="logo" viewBox="0 0 48 48" aria-hidden="true"><circle cx="24" cy="24" r="23" fill="#1d1d1f"/>\
        <path d="M24 13a6 6 0 1 1 0 12a6 6 0 0 1 0-12zm-10 23c0-5.5 4.5-9 10-9s10 3.5 10 9z" fill="#fff"/></svg>
        """

    /// The one inline style; `ContentSecurityPolicy` allows exactly this text by its hash.
    static let style = """
        :root{color-scheme:light dark}
        *{box-sizing:border-box}
        body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;
        font:15px/1.45 -apple-system,BlinkMacSystemFont,"SF Pro Text","Helvetica Neue",Helvetica,Arial,sans-serif;
        background:#f5f5f7;color:#1d1d1f;padding:24px}
        .sheet{width:100%;max-width:420px;background:#fff;border-radius:18px;padding:32px 32px 24px;
        box-shadow:0 10px 40px rgba(0,0,0,.08),0 1px 3px rgba(0,0,0,.06);text-align:center}
        .logo{width:48px;height:48px;margin-bottom:12px}
        h1{font-size:22px;font-weight:600;margin:0 0 6px}
        p.lead{margin:0 0 22px;color:#6e6e73}
        .client{font-weight:600;color:#1d1d1f}
        form{text-align:left}
        label{display:block;font-size:13px;color:#6e6e73;margin:14px 0 6px}
        input[type=email],input[type=text]{width:100%;padding:11px 12px;border:1px solid #d2d2d7;border-radius:10px;
        font:inherit;background:#fff;color:#1d1d1f}
        input:focus{outline:none;border-color:#0071e3;box-shadow:0 0 0 3px rgba(0,113,227,.2)}
        .row{display:flex;gap:10px}.row>div{flex:1}
        fieldset{border:0;padding:0;margin:18px 0 0}
        legend{font-size:13px;color:#6e6e73;margin-bottom:6px;padding:0}
        label.choice{display:flex;align-items:flex-start;gap:10px;padding:11px 12px;border:1px solid #d2d2d7;border-radius:10px;
        margin:0 0 8px;cursor:pointer;font-size:15px;color:inherit}
        label.choice:has(input:checked){border-color:#0071e3;box-shadow:0 0 0 1px #0071e3}
        .choice input{margin-top:3px}
        .choice small{display:block;color:#6e6e73}
        .actions{display:flex;flex-direction:column;gap:10px;margin-top:24px}
        button{font:inherit;font-weight:500;border-radius:10px;padding:12px;border:0;cursor:pointer}
        button.primary{background:#0071e3;color:#fff}
        button.primary:hover{background:#0077ed}
        button.secondary{background:transparent;color:#0066cc}
        .error h1{color:#b3261e}
        .detail{font-family:ui-monospace,Menlo,monospace;font-size:13px;color:#6e6e73;word-break:break-all}
        .footnote{font-size:12px;color:#86868b;margin-top:18px;text-align:center}
        .sheet.wide{max-width:860px;text-align:left}
        .mail{border-top:1px solid #d2d2d7;padding:16px 0 8px}
        .mail h2{font-size:17px;font-weight:600;margin:0 0 4px}
        .meta{font-size:13px;color:#6e6e73;margin:0 0 8px;word-break:break-all}
        .mail pre{white-space:pre-wrap;word-break:break-word;font:13px/1.5 ui-monospace,Menlo,monospace;margin:8px 0}
        .mail summary{font-size:13px;color:#6e6e73;cursor:pointer}
        a{color:#0066cc}
        @media (prefers-color-scheme:dark){body{background:#000;color:#f5f5f7}.sheet{background:#1c1c1e}
        h1,.client{color:#f5f5f7}input[type=email],input[type=text]{background:#2c2c2e;color:#f5f5f7;border-color:#3a3a3c}
        label.choice{border-color:#3a3a3c}}
        """
}
