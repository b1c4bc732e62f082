import AppleSimulator
import Foundation
import HTTPClient
import OpenSSLCrypto
import Testing

/// The simulator's pages echo what was posted to them, so they carry a strict CSP and escape
/// per scalar: a quote hidden behind a combining mark once closed an attribute (issue 9,
/// finding 5).
@Suite struct PageSecurityTests {
    static func hashSource(of text: Substring) -> String {
        "'sha256-" + standardBase64(SHA256.hash(Array(text.utf8))) + "'"
    }

    /// Foundation's encoder, independent of the simulator's.
    static func standardBase64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    static func between(_ page: String, _ open: String, _ close: String) -> Substring? {
        guard let start = page.firstRange(of: open), let end = page[start.upperBound...].firstRange(of: close) else { return nil }
        return page[start.upperBound..<end.lowerBound]
    }

    @Test func theConsentPageAllowsItsStyleAndNoScript() async throws {
        try await withSimulator { harness in
            let response = try await harness.get(AuthorizeEndpointTests.query())
            let policy = try #require(response.header("Content-Security-Policy"))
            #expect(policy.contains("default-src 'none'"))
            #expect(policy.contains("script-src 'none'"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(policy.contains("form-action 'self' https://app.example.com"))
            #expect(!policy.contains("unsafe"))
            let style = try #require(Self.between(response.text, "<style>", "</style>"))
            #expect(policy.contains("style-src \(Self.hashSource(of: style))"), "the hash allows exactly the inline style")
            #expect(!response.text.contains("<script"))
            #expect(response.header("X-Frame-Options") == "DENY")
            #expect(response.header("X-Content-Type-Options") == "nosniff")
        }
    }

    @Test func errorPagesCarryThePolicyToo() async throws {
        try await withSimulator { harness in
            let response = try await harness.get(AuthorizeEndpointTests.query(clientID: ""))
            #expect(response.status == 400)
            #expect(response.header("Content-Security-Policy")?.contains("script-src 'none'") == true)
        }
    }

    @Test func theFormPostPageAllowsOnlyItsOwnScript() async throws {
        try await withSimulator { harness in
            let page = try await harness.postForm("/auth/authorize", Self.consentFields(email: "ada@example.com"))
            #expect(page.status == 200)
            let policy = try #require(page.header("Content-Security-Policy"))
            let script = try #require(Self.between(page.text, "<script>", "</script>"))
            #expect(policy.contains("script-src \(Self.hashSource(of: script))"))
            #expect(policy.contains("default-src 'none'"))
            #expect(!policy.contains("unsafe"))
        }
    }

    static func consentFields(email: String) -> [(String, String)] {
        [
            ("client_id", "com.example.web"), ("redirect_uri", "https://app.example.com/cb"), ("response_type", "code id_token"),
            ("response_mode", "form_post"), ("scope", "name email"), ("state", "s"), ("nonce", "n"),
            ("email", email), ("first_name", "Ada"), ("last_name", "L"), ("email_choice", "share"), ("action", "continue"),
        ]
    }

    /// The reflected XSS: a cross-site form posts an email without `@`, and the consent page
    /// comes back with it in `value="…"`.
    @Test func aQuoteBehindACombiningMarkStaysInsideTheAttribute() async throws {
        try await withSimulator { harness in
            let hostile = "x\"\u{301} autofocus onfocus=alert(1) x=\"\u{301}"
            let page = try await harness.postForm("/auth/authorize", Self.consentFields(email: hostile))
            #expect(page.status == 200)
            #expect(page.text.contains(#"id="problem""#), "the page was shown again with the value")
            let bytes = Array(page.text.utf8)
            let quoteThenMark: [UInt8] = [0x22, 0xCC, 0x81]
            let unescaped = bytes.indices.dropLast(2).contains { Array(bytes[$0..<$0 + 3]) == quoteThenMark }
            #expect(!unescaped)
            #expect(page.text.contains("x&quot;\u{301} autofocus onfocus=alert(1)"))
        }
    }
}
