import Foundation
import HTTPServer
import Testing
import WireFormat
@testable import SiwaApp

/// docs/guides/passwords-and-email.md "Language", in process on both engines: every page (`/`, `/account`, the password forms, the
/// reset and verification pages, the error pages) in Korean by `Accept-Language: ko-KR` and by
/// `?lang=ko` (which wins, and which links, forms and redirects carry on), in English by
/// default and for a language siwa-server does not speak; the button in Apple's Korean words;
/// `lang`, `Content-Language` and `Vary: Accept-Language`; values still escaped.
@Suite(.timeLimit(.minutes(2)))
struct KoreanPagesTests {
    typealias Fixture = WebFlowTests.Fixture
    typealias Reply = WebFlowTests.Reply

    static let korean = ["Accept-Language": "ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7"]
    static let french = ["Accept-Language": "fr-FR,fr;q=0.9"]

    /// The page's language by its markup and headers.
    static func expectLanguage(_ reply: Reply, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.body.contains(#"<html lang="\#(code)">"#), sourceLocation: sourceLocation)
        #expect(reply.header("Content-Language") == code, sourceLocation: sourceLocation)
        #expect(
            reply.headers.contains { $0.0.lowercased() == "vary" && $0.1.contains("Accept-Language") }, "no Vary: Accept-Language",
            sourceLocation: sourceLocation)
        WebFlowTests.expectPageHeaders(reply, sourceLocation: sourceLocation)
    }

    /// The words a person reads on a Korean page that are written in Latin letters, once the
    /// names that stay as they are (`allowed`: the product's, Apple's, the user's own values)
    /// are taken out: an untranslated sentence shows up here.
    static func latinWords(_ page: String, allowing allowed: [String] = []) -> [String] {
        var text = page
        if let start = text.range(of: "<body>") { text = String(text[start.upperBound...]) }
        for pattern in ["<[^>]*>", "&[#a-z0-9]+;", #"\d{4}-\d\d-\d\dT[\d:]+Z"#] {
            text = text.replacingOccurrences(of: pattern, with: " ", options: .regularExpression)
        }
        for word in allowed + ["siwa-server", "Apple ID", "Apple", "English"] { text = text.replacingOccurrences(of: word, with: " ") }
        return text.split { !($0.isASCII && $0.isLetter) }.map(String.init)
    }

    static func formToken(_ fixture: Fixture, _ path: String = "/?lang=ko") async throws -> (cookie: String, token: String) {
        let home = try await fixture.send("GET", path)
        let cookie = try #require(home.cookieValue(SessionCookies.formName))
        return ("\(SessionCookies.formName)=\(cookie)", try #require(PasswordPagesTests.csrf(in: home.body)))
    }

    @Test(arguments: DatabaseEngine.available)
    func theSignInPageSpeaksTheLanguageOfTheRequest(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            for headers in [[:], Self.french, ["Accept-Language": "en-US,en;q=0.9"]] {
                let english = try await fixture.send("GET", "/", headers: headers)
                Self.expectLanguage(english, "en")
                #expect(english.body.contains(#"<span class="siwa-button__title">Sign in with Apple</span>"#))
                #expect(english.body.contains("<h1>Sign in</h1>") && english.body.contains(#"action="/auth/password/sign-in""#))
                #expect(english.body.contains(#"href="/auth/apple/login""#) && english.body.contains(Pages.appleScriptURL(.en)))
            }

            // By Accept-Language: Korean words, the same forms (nothing to carry on: the browser asks again).
            let byHeader = try await fixture.send("GET", "/", headers: Self.korean)
            Self.expectLanguage(byHeader, "ko")
            #expect(byHeader.body.contains(#"<span class="siwa-button__title">Apple로 로그인</span>"#))
            #expect(byHeader.body.contains("<h1>로그인</h1>") && byHeader.body.contains("<title>로그인 — siwa-server</title>"))
            #expect(byHeader.body.contains(#"action="/auth/password/sign-in""#) && byHeader.body.contains(#"href="/auth/apple/login""#))
            #expect(byHeader.body.contains(Pages.appleScriptURL(.ko)) && Pages.appleScriptURL(.ko).contains("/ko_KR/"))
            #expect(byHeader.body.contains(#"data-failed="로그인하지 못했습니다. 다시 시도해 주세요.""#))
            #expect(Self.latinWords(byHeader.body) == [])

            // By ?lang=ko, which the forms, the button and the switch carry on.
            let byQuery = try await fixture.send("GET", "/?lang=ko")
            Self.expectLanguage(byQuery, "ko")
            #expect(byQuery.body.contains(#"action="/auth/password/sign-in?lang=ko""#) && byQuery.body.contains(#"action="/auth/password/sign-up?lang=ko""#))
            #expect(byQuery.body.contains(#"href="/auth/apple/login?lang=ko""#))
            #expect(byQuery.body.contains(#"<a href="/?lang=en" hreflang="en" lang="en">English</a>"#))
            #expect(byQuery.body.contains(#"<a href="/?lang=ko" hreflang="ko" lang="ko" aria-current="true">한국어</a>"#))
            #expect(Self.latinWords(byQuery.body) == [])

            // The query wins over the header; a lang siwa-server does not speak is ignored.
            let chosenEnglish = try await fixture.send("GET", "/?lang=en", headers: Self.korean)
            Self.expectLanguage(chosenEnglish, "en")
            #expect(chosenEnglish.body.contains(#"action="/auth/password/sign-in?lang=en""#))
            let unknown = try await fixture.send("GET", "/?lang=fr", headers: Self.korean)
            Self.expectLanguage(unknown, "ko")
            #expect(unknown.body.contains(#"action="/auth/password/sign-in""#))
            #expect(try await fixture.send("GET", "/?lang=fr").body.contains(#"<html lang="en">"#))

            // The other title, and a notice.
            let continueTitle = try await fixture.send("GET", "/?title=continue&lang=ko&error=cancelled")
            #expect(continueTitle.body.contains(#"<span class="siwa-button__title">Apple로 계속하기</span>"#))
            #expect(continueTitle.body.contains("Apple로 로그인을 취소했습니다."))
            #expect(continueTitle.body.contains(#"href="/?title=continue&amp;error=cancelled&amp;lang=en""#))
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func formsAndTheAccountPageKeepAChosenLanguage(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let (form, token) = try await Self.formToken(fixture)
            func post(_ path: String, _ fields: [(String, String)], cookie: String, headers: [String: String] = [:], origin: String? = nil) async throws -> Reply {
                var all = ["Content-Type": "application/x-www-form-urlencoded", "Origin": origin ?? fixture.origin, "Cookie": cookie]
                all.merge(headers) { _, new in new }
                return try await fixture.send("POST", path, headers: all, body: FormFields(fields: fields).encoded())
            }

            // A refused form answers in the language of the page it came from.
            let wrong = try await post("/auth/password/sign-in?lang=ko", [("csrf", token), ("email", "nobody@example.com"), ("password", "wrong horse battery")], cookie: form)
            #expect(wrong.status == 303 && wrong.header("Location") == "/?error=invalid_credentials&lang=ko")
            let notice = try await fixture.send("GET", "/?error=invalid_credentials&lang=ko")
            #expect(notice.body.contains("이메일 또는 비밀번호가 올바르지 않습니다."))
            // Without a chosen language the answer is as before: the browser's header decides.
            let plain = try await post("/auth/password/sign-in", [("csrf", token), ("email", "nobody@example.com"), ("password", "wrong horse battery")], cookie: form)
            #expect(plain.header("Location") == "/?error=invalid_credentials")

            // Error pages: by the form's lang, and by Accept-Language.
            for (path, headers) in [("/auth/password/sign-in?lang=ko", [String: String]()), ("/auth/password/sign-in", Self.korean)] {
                let foreign = try await post(path, [("csrf", token)], cookie: form, headers: headers, origin: "https://evil.example")
                #expect(foreign.status == 403)
                Self.expectLanguage(foreign, "ko")
                #expect(foreign.body.contains("<h1>요청이 거부되었습니다</h1>") && foreign.body.contains("이 양식은 이 사이트의 페이지에서만 보낼 수 있습니다."))
                #expect(Self.latinWords(foreign.body) == [])
            }
            let english = try await post("/auth/password/sign-in", [("csrf", "forged")], cookie: form, headers: Self.french)
            #expect(english.status == 403)
            Self.expectLanguage(english, "en")
            #expect(english.body.contains("This form has expired."))

            // Sign up from the Korean page: the account page follows, in Korean, the name escaped.
            let made = try await post(
                "/auth/password/sign-up?lang=ko", [("csrf", token), ("email", "ko@example.com"), ("password", "correct horse battery"), ("given_name", "<b>{name}</b>")],
                cookie: form)
            #expect(made.status == 303 && made.header("Location") == "/account?welcome=1&lang=ko")
            let session = "\(SessionCookies.sessionName)=\(try #require(made.cookieValue(SessionCookies.sessionName)))"
            let account = try await fixture.send("GET", "/account?welcome=1&lang=ko", headers: ["Cookie": session])
            Self.expectLanguage(account, "ko")
            #expect(account.body.contains(#"<h1 id="greeting">&lt;b&gt;{name}&lt;/b&gt;님, 안녕하세요</h1>"#))
            #expect(!account.body.contains("<b>{name}"))
            #expect(account.body.contains("계정이 준비되었습니다.") && account.body.contains("이메일과 비밀번호로 로그인했습니다."))
            #expect(account.body.contains(#"<span class="badge badge--warn">확인되지 않음</span>"#))
            #expect(account.body.contains(#"action="/account/logout?lang=ko""#) && account.body.contains(#"action="/account/password?lang=ko""#))
            #expect(account.body.contains(#"&amp;lang=ko">Apple로 로그인 추가</a>"#))
            // The session's device name is what the sign-in recorded (DeviceName), not a word of the page.
            #expect(Self.latinWords(account.body, allowing: ["ko@example.com", DeviceName.describe(userAgent: nil), "b", "name"]) == [])
            let byHeader = try await fixture.send("GET", "/account", headers: ["Cookie": session, "Accept-Language": "ko"])
            Self.expectLanguage(byHeader, "ko")
            #expect(byHeader.body.contains(#"action="/account/logout""#))
            let inEnglish = try await fixture.send("GET", "/account", headers: ["Cookie": session])
            Self.expectLanguage(inEnglish, "en")
            #expect(inEnglish.body.contains(#"<h1 id="greeting">Hello, &lt;b&gt;{name}&lt;/b&gt;</h1>"#))

            // A refusal on the account page, then signing out, keep the language.
            let accountToken = try #require(PasswordPagesTests.csrf(in: account.body))
            let weak = try await post("/account/password?lang=ko", [("csrf", accountToken), ("current_password", "correct horse battery"), ("new_password", "basketball")], cookie: session)
            #expect(weak.header("Location") == "/account?error=weak_password&lang=ko")
            #expect(try await fixture.send("GET", "/account?error=weak_password&lang=ko", headers: ["Cookie": session]).body.contains(#"<p id="account-problem" class="notice" role="alert">다른 비밀번호를 정하세요."#))
            let out = try await post("/account/logout?lang=ko", [("csrf", accountToken)], cookie: session)
            #expect(out.header("Location") == "/?signed_out=1&lang=ko")
            #expect(try await fixture.send("GET", "/?signed_out=1&lang=ko").body.contains("로그아웃되었습니다."))
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func theResetAndVerificationPagesInKorean(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let code = "<x>\"&"
            for (path, headers) in [("/reset-password?code=\(FormURLEncoding.escape(code))", Self.korean), ("/reset-password?lang=ko&code=\(FormURLEncoding.escape(code))", [:])] {
                let reset = try await fixture.send("GET", path, headers: headers)
                Self.expectLanguage(reset, "ko")
                #expect(reset.body.contains("<h1>새 비밀번호 설정</h1>") && reset.body.contains(#"<button id="reset" type="submit">비밀번호 설정</button>"#))
                #expect(reset.body.contains(#"value="&lt;x&gt;&quot;&amp;""#) && !reset.body.contains(code))
                #expect(Self.latinWords(reset.body) == [])
            }
            let chosen = try await fixture.send("GET", "/reset-password?lang=ko&code=abc&error=weak_password")
            #expect(chosen.body.contains(#"action="/auth/password/reset?lang=ko""#) && chosen.body.contains(#"<a href="/?lang=ko">로그인 화면으로 돌아가기</a>"#))
            #expect(chosen.body.contains("다른 비밀번호를 정하세요."))
            #expect(chosen.body.contains(#"href="/reset-password?code=abc&amp;error=weak_password&amp;lang=en""#))
            let french = try await fixture.send("GET", "/reset-password?code=abc", headers: Self.french)
            Self.expectLanguage(french, "en")
            #expect(french.body.contains("<h1>Choose a new password</h1>"))

            for (path, headers) in [("/verify-email?code=\(FormURLEncoding.escape(code))", Self.korean), ("/verify-email?code=\(FormURLEncoding.escape(code))&lang=ko", [:])] {
                let verify = try await fixture.send("GET", path, headers: headers)
                Self.expectLanguage(verify, "ko")
                #expect(verify.body.contains(#"<button id="verify" type="submit">내 이메일 주소 확인</button>"#))
                #expect(verify.body.contains(#"value="&lt;x&gt;&quot;&amp;""#) && !verify.body.contains(code))
                #expect(Self.latinWords(verify.body) == [])
            }
            #expect(try await fixture.send("GET", "/verify-email?code=abc&lang=ko").body.contains(#"action="/auth/email/verify?lang=ko""#))
            let done = try await fixture.send("GET", "/verify-email?done=1", headers: Self.korean)
            #expect(done.body.contains("이메일 주소가 확인되었습니다. 이 페이지를 닫아도 됩니다."))
            let wrong = try await fixture.send("GET", "/verify-email?error=invalid_grant&lang=ko")
            #expect(wrong.body.contains("확인 코드가 올바르지 않거나"))
            let english = try await fixture.send("GET", "/verify-email?code=abc", headers: Self.french)
            Self.expectLanguage(english, "en")
            #expect(english.body.contains("Verify my email address"))
        }
    }

    /// Apple's callback carries no `?lang=`: the sign-in started with one returns to the account
    /// page with it, and a failed callback speaks the browser's language.
    @Test(arguments: DatabaseEngine.available)
    func theWebSignInReturnsInTheChosenLanguage(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let login = try await fixture.send("GET", "/auth/apple/login?lang=ko")
            let location = try #require(login.header("Location"))
            let query = try FormFields(parsing: location.split(separator: "?", maxSplits: 1).last ?? "")
            let binding = try #require(login.cookieValue(SessionCookies.bindingName))
            let callback = try await fixture.callback(
                try fixture.applePost(state: try #require(query["state"]), nonce: try #require(query["nonce"])), binding: binding)
            #expect(callback.status == 303 && callback.header("Location") == "/account?lang=ko")
            // An explicit return_to is kept as it is.
            let (_, explicit, explicitBinding) = try await fixture.login(returnTo: "/account?tab=1")
            let returned = try await fixture.callback(
                try fixture.applePost(state: try #require(explicit["state"]), nonce: try #require(explicit["nonce"])), binding: explicitBinding)
            #expect(returned.header("Location") == "/account?tab=1")

            let failed = try await fixture.send("POST", "/auth/apple/callback", headers: [
                "Content-Type": "application/x-www-form-urlencoded", "Origin": "https://appleid.apple.com", "Accept-Language": "ko-KR",
            ], body: "state=never-issued&code=c&id_token=t")
            #expect(failed.status == 400)
            Self.expectLanguage(failed, "ko")
            #expect(failed.body.contains("<h1>로그인하지 못했습니다</h1>") && failed.body.contains("이 로그인 링크는 이미 사용되었거나 발급된 적이 없습니다."))
            #expect(Self.latinWords(failed.body) == [])
        }
    }
}
