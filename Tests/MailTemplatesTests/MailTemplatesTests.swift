import Testing
@testable import MailTemplates

@Suite struct MailTemplatesTests {
    static let values: [MailKind: [String: String]] = [
        .verifyEmail: ["link": "https://example.com/verify-email?code=abc", "code": "abc", "expires_at": "2026-11-28 03:00 UTC"],
        .passwordReset: ["link": "https://example.com/reset-password?code=abc", "code": "abc", "expires_at": "2026-11-28 03:00 UTC"],
        .securityNotice: ["change": "password_set", "when": "2026-11-27 03:00 UTC", "device": "Safari on iPhone"],
        .accountDeleted: ["when": "2026-11-27 03:00 UTC"],
        .test: ["when": "2026-11-27 03:00 UTC"],
    ]

    @Test(arguments: MailKind.allCases, Language.allCases)
    func everyKindRendersInEveryLanguage(kind: MailKind, language: Language) throws {
        let mail = try MailTemplates.render(kind, language: language, values: Self.values[kind]!)
        #expect(!mail.subject.isEmpty)
        #expect(!mail.subject.contains("\n"))
        #expect(!mail.text.contains("{{") && !mail.html.contains("{{"))
        #expect(mail.html.hasPrefix("<!DOCTYPE html>"))
        #expect(mail.html.contains("lang=\"\(language.rawValue)\""))
        for (key, value) in Self.values[kind]! where key != "change" {
            #expect(mail.text.contains(value), "\(key) missing from the text part")
        }
    }

    @Test func koreanMailIsWrittenInKorean() throws {
        let mail = try MailTemplates.render(.verifyEmail, language: .ko, values: Self.values[.verifyEmail]!)
        #expect(mail.subject == "이메일 주소를 확인해 주세요")
        #expect(mail.html.contains("이메일 확인"))
    }

    @Test(arguments: SecurityChange.allCases, Language.allCases)
    func everySecurityChangeHasAPhrase(change: SecurityChange, language: Language) throws {
        var values = Self.values[.securityNotice]!
        values["change"] = change.rawValue
        let mail = try MailTemplates.render(.securityNotice, language: language, values: values)
        #expect(mail.text.contains(EmbeddedTemplates.changePhrase(change, language)))
    }

    @Test func valuesAreEscapedInHTMLAndKeptInText() throws {
        var values = Self.values[.securityNotice]!
        values["device"] = "<script>alert(1)</script> & \"x\""
        let mail = try MailTemplates.render(.securityNotice, language: .en, values: values)
        #expect(mail.html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"))
        #expect(!mail.html.contains("<script>"))
        #expect(mail.text.contains("<script>alert(1)</script> & \"x\""))
    }

    @Test func aMissingValueIsAnError() {
        #expect(throws: MailTemplateError.missingValue(kind: .verifyEmail, key: "code")) {
            try MailTemplates.render(.verifyEmail, language: .en, values: ["link": "x", "expires_at": "y"])
        }
        #expect(throws: MailTemplateError.unknownChange("password_stolen")) {
            try MailTemplates.render(.securityNotice, language: .en, values: ["change": "password_stolen", "when": "", "device": ""])
        }
    }

    @Test func aValueThatLooksLikeAPlaceholderIsNotExpandedAgain() throws {
        var values = Self.values[.accountDeleted]!
        values["when"] = "{{when}} {{{body}}}"
        let mail = try MailTemplates.render(.accountDeleted, language: .en, values: values)
        #expect(mail.text.contains("{{when}} {{{body}}}"))
        #expect(mail.html.contains("{{when}} {{{body}}}"))
    }

    @Test(arguments: [
        (nil, Language.en), ("ko", .ko), ("ko-KR,ko;q=0.9,en;q=0.8", .ko), ("en-US,en;q=0.9,ko;q=0.8", .en),
        ("fr-FR, ko;q=0.5, en;q=0.4", .ko), ("fr", .en), ("ko;q=0, en", .en), ("en;q=0.2, ko;q=0.9", .ko),
        ("*", .en), ("KO", .ko), ("ko;q=abc", .ko), ("", .en),
    ] as [(String?, Language)])
    func acceptLanguageNamesTheFirstOfEnglishAndKorean(header: String?, expected: Language) {
        #expect(Language.negotiate(acceptLanguage: header) == expected)
    }
}
