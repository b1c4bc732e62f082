import Testing
@testable import SiwaApp

/// The demo's sign-in page leads to what the demo shows besides the account: its webhook
/// events and the Apple ID simulator's mailbox, where the mail it sends arrives.
@Suite struct DemoSignInPageTests {
    @Test func theDemoPageLinksTheSimulatorsMailboxEscaped() {
        let forms = Pages.PasswordForms(csrf: "csrf", canReset: true)
        let demo = Pages.home(
            button: SignInButton(), mode: .demo(mailboxURL: "http://127.0.0.1:4321/mailbox?a=1&b=2"), notice: nil, passwordForms: forms,
            language: .english, here: "/")
        #expect(demo.contains(#"<a id="demo-mailbox" href="http://127.0.0.1:4321/mailbox?a=1&amp;b=2">mailbox</a>"#))
        let real = Pages.home(
            button: SignInButton(), mode: .apple(clientID: "com.example.web", redirectURI: "https://example.com/cb"), notice: nil,
            passwordForms: forms, language: .english, here: "/")
        #expect(!real.contains("demo-mailbox"))
        let korean = Pages.home(
            button: SignInButton(), mode: .demo(mailboxURL: "http://127.0.0.1:4321/mailbox"), notice: nil, passwordForms: forms,
            language: PageLanguage(.ko), here: "/")
        #expect(korean.contains(#"<a id="demo-mailbox" href="http://127.0.0.1:4321/mailbox">메일함</a>"#))
    }
}
