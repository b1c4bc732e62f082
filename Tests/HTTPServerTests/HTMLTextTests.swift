import HTTPServer
import Testing

@Suite struct HTMLTextTests {
    @Test func theFiveAreReplaced() {
        #expect(HTMLText.escape(#"<a href="x" title='y'>&</a>"#) == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;")
    }

    /// `"` + U+0301 is one Character, which a per-Character escaper let through: on the
    /// simulator's consent page that closed the attribute (reflected XSS, issue 9 finding 5).
    @Test(arguments: ["\"", "'", "<", ">", "&"])
    func aCombiningMarkNeverHidesOne(_ special: String) {
        let hostile = "x" + special + "\u{301}" + " onfocus=alert(1) autofocus " + special + "\u{20DD}"
        #expect(hostile.count < hostile.unicodeScalars.count)
        let escaped = HTMLText.escape(hostile)
        #expect(!escaped.unicodeScalars.contains { "\"'<>".unicodeScalars.contains($0) })
        #expect(escaped.unicodeScalars.filter { $0 == "&" }.count == 2)
        #expect(escaped.contains("\u{301}"))
    }

    @Test func otherTextIsKeptAsItIs() {
        let text = "Zoë 🇫🇷 e\u{301} 日本"
        #expect(HTMLText.escape(text) == text)
    }
}
