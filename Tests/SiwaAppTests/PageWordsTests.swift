import HTTPServer
import MailTemplates
import Testing
@testable import SiwaApp

/// The pages' words (docs/guides/passwords-and-email.md "Language"): both strings files hold exactly the keys pages can
/// ask for (`PageText`), once each, with the same `{values}`; and a request's language is its
/// `?lang=`, else its `Accept-Language`, else English.
struct PageWordsTests {
    @Test(arguments: Language.allCases)
    func everyKeyIsInTheFileOnceAndNoOtherKey(_ language: Language) {
        let entries = PageWords.entries(language)
        let keys = entries.map(\.key)
        #expect(Set(keys).count == keys.count, "a key twice in pages.\(language.rawValue).txt")
        let wanted = Set(PageText.allCases.map(\.rawValue))
        #expect(wanted.subtracting(keys).sorted() == [], "missing from pages.\(language.rawValue).txt")
        #expect(Set(keys).subtracting(wanted).sorted() == [], "in pages.\(language.rawValue).txt but no page asks for it")
        for entry in entries {
            #expect(!entry.text.isEmpty && entry.text == entry.text.trimmingSpaces, "\(language.rawValue): \(entry.key)")
        }
    }

    @Test func bothLanguagesFillInTheSameValues() {
        func names(_ text: String) -> [String] {
            text.split(separator: "{", omittingEmptySubsequences: false).dropFirst()
                .compactMap { $0.split(separator: "}", omittingEmptySubsequences: false).first.map(String.init) }.sorted()
        }
        for key in PageText.allCases {
            #expect(names(PageWords.text(key, .en)) == names(PageWords.text(key, .ko)), "\(key)")
        }
        #expect(names(PageWords.text(.accountHello, .ko)) == ["name"])
    }

    @Test func theButtonSaysApplesOwnWords() {
        #expect(PageWords.text(.appleSignIn, .en) == "Sign in with Apple")
        #expect(PageWords.text(.appleContinue, .en) == "Continue with Apple")
        #expect(PageWords.text(.appleSignIn, .ko) == "Apple로 로그인")
        #expect(PageWords.text(.appleContinue, .ko) == "Apple로 계속하기")
        let korean = SignInButton(query: ["title": "continue"]).html(href: "/x", language: .ko)
        #expect(korean.contains(#"<span class="siwa-button__title">Apple로 계속하기</span>"#))
        #expect(korean.contains(#"aria-label="Apple로 계속하기""#))
        let logo = SignInButton(query: ["title": "logo"]).html(href: "/x", language: .ko)
        #expect(logo.contains(#"aria-label="Apple로 로그인""#) && !logo.contains("siwa-button__title"))
    }

    /// A value is escaped and filled in once: a name that holds `{name}` or markup stays text.
    @Test func valuesAreEscapedAndFilledInOnePass() {
        #expect(PageWords.html(.accountHello, .en, ["name": "{name} <b>&"]) == "Hello, {name} &lt;b&gt;&amp;")
        #expect(PageWords.html(.accountHello, .ko, ["name": "\"{x}\""]) == "&quot;{x}&quot;님, 안녕하세요")
        #expect(PageWords.html(.newPasswordFor, .en, ["email": "a'b@example.com"]) == "New password for a&#39;b@example.com")
        // Markup the page built goes in as it is; the text around it is escaped.
        #expect(PageWords.html(.homeDemoWebhooks, .en, markup: ["link": "<a>x</a>"]).contains("team&#39;s backend would receive are shown at <a>x</a>."))
        #expect(PageWords.fill("{a}{b}{", { $0 == "a" ? "{b}" : nil }) == "{b}{b}{")
    }

    @Test(arguments: [
        // (query, Accept-Language, language, chosen by the query)
        ("", nil, Language.en, false),
        ("", "ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7", .ko, false),
        ("", "fr-FR,fr;q=0.9", .en, false),
        ("", "fr, ko;q=0.5", .ko, false),
        ("", "en-US,en;q=0.9", .en, false),
        ("lang=ko", nil, .ko, true),
        ("lang=ko", "en-US", .ko, true),
        ("lang=en", "ko-KR", .en, true),
        ("lang=fr", "ko-KR", .ko, false),
        ("lang=KO", nil, .en, false),
        ("lang=", "ko", .ko, false),
        ("code=x&lang=ko", nil, .ko, true),
        // A query that does not read (a name twice, a U+0000) chooses nothing.
        ("lang=ko&lang=en", "ko", .ko, false),
        ("lang=en&lang=en", nil, .en, false),
        ("lang=ko%00", "ko", .ko, false),
    ] as [(String, String?, Language, Bool)])
    func theQueryWinsThenAcceptLanguage(_ query: String, _ acceptLanguage: String?, _ expected: Language, _ chosen: Bool) {
        var headers = HTTPHeaders()
        if let acceptLanguage { headers.add("Accept-Language", acceptLanguage) }
        let language = PageLanguage(HTTPRequest(.get, "/" + (query.isEmpty ? "" : "?" + query), headers: headers))
        #expect(language == PageLanguage(expected, chosen: chosen))
    }

    @Test func aChosenLanguageIsCarriedOnAndTheSwitchKeepsThePage() {
        #expect(PageLanguage(.ko).carried("/account") == "/account")
        #expect(PageLanguage(.ko, chosen: true).carried("/account") == "/account?lang=ko")
        #expect(PageLanguage(.en, chosen: true).carried("/?error=busy") == "/?error=busy&lang=en")
        let request = HTTPRequest(.get, "/reset-password?code=a%2Bb&lang=ko&error=weak_password")
        #expect(PageLanguage.here(request) == "/reset-password?code=a%2Bb&error=weak_password")
        #expect(PageLanguage.here(HTTPRequest(.get, "/?lang=ko")) == "/")
        let links = Pages.languageSwitch(PageLanguage(.ko, chosen: true), here: "/reset-password?code=%3C")
        #expect(links.contains(#"<a href="/reset-password?code=%3C&amp;lang=en" hreflang="en" lang="en">English</a>"#))
        #expect(links.contains(#"<a href="/reset-password?code=%3C&amp;lang=ko" hreflang="ko" lang="ko" aria-current="true">한국어</a>"#))
        #expect(links.contains(#"aria-label="언어""#))
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
