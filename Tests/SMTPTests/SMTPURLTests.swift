import SMTP
import Testing

@Suite struct SMTPURLTests {
    @Test func defaultsAndParts() throws {
        let plain = try SMTPURL("smtp://mail.example.com")
        #expect(plain.security == .startTLS && plain.host == "mail.example.com" && plain.port == 587 && plain.credentials == nil)
        let implicit = try SMTPURL("SMTPS://Mail.Example.COM")
        #expect(implicit.security == .implicitTLS && implicit.host == "mail.example.com" && implicit.port == 465)
        let explicitPort = try SMTPURL("smtp://127.0.0.1:2525/")
        #expect(explicitPort.port == 2525 && explicitPort.isLoopback)
        let v6 = try SMTPURL("smtps://[::1]:10465")
        #expect(v6.host == "::1" && v6.port == 10465 && v6.isLoopback)
        #expect(try !SMTPURL("smtp://smtp.example.com").isLoopback)
        #expect(try SMTPURL("smtp://localhost").isLoopback)
    }

    @Test func userInfoIsPercentDecoded() throws {
        let url = try SMTPURL("smtp://apikey%40example.com:p%40ss%3Aw%2Frd%25@smtp.example.com:587")
        #expect(url.credentials == SMTPCredentials(user: "apikey@example.com", password: "p@ss:w/rd%"))
        // An unencoded `@` in the password: the last `@` ends the user info.
        let raw = try SMTPURL("smtp://user:p@ss@smtp.example.com")
        #expect(raw.credentials == SMTPCredentials(user: "user", password: "p@ss") && raw.host == "smtp.example.com")
        let korean = try SMTPURL("smtp://%EA%B9%80:%ED%82%A4@smtp.example.com")
        #expect(korean.credentials == SMTPCredentials(user: "김", password: "키"))
    }

    @Test func badURLsAreRefusedWithTheirProblem() {
        let cases: [(String, SMTPURL.Problem)] = [
            ("http://smtp.example.com", .scheme),
            ("smtp.example.com:587", .scheme),
            ("", .scheme),
            ("smtp://", .host),
            ("smtp://:587", .host),
            ("smtp://exa mple.com", .characters),
            ("smtp://smtp.example.com\r\n", .characters),
            ("smtp://smtp.exämple.com", .characters),
            ("smtp://-bad.example.com", .host),
            ("smtp://a..b", .host),
            ("smtp://[::1", .host),
            ("smtp://[nonsense]:25", .host),
            ("smtp://smtp.example.com:", .port),
            ("smtp://smtp.example.com:0", .port),
            ("smtp://smtp.example.com:65536", .port),
            ("smtp://smtp.example.com:+25", .port),
            ("smtp://smtp.example.com/path", .path),
            ("smtp://smtp.example.com?x=1", .path),
            ("smtp://smtp.example.com#x", .path),
            ("smtp://user@smtp.example.com", .userInfo),
            ("smtp://user:@smtp.example.com", .userInfo),
            ("smtp://:secret@smtp.example.com", .userInfo),
            ("smtp://user:bad%zzescape@smtp.example.com", .userInfo),
            ("smtp://user:nul%00@smtp.example.com", .userInfo),
            ("smtp://user:pa/ss@smtp.example.com", .userInfo),
        ]
        for (text, problem) in cases {
            #expect(throws: problem, "\(text.debugDescription)") { try SMTPURL(text) }
        }
    }

    @Test func thePasswordIsNeverShown() throws {
        let password = "hunter2-Secret"
        let url = try SMTPURL("smtp://mailer:\(password)@smtp.example.com")
        #expect(url.redacted == "smtp://mailer:***@smtp.example.com:587")
        #expect(try SMTPURL("smtps://a%20b:x@[::1]").redacted == "smtps://a%20b:***@[::1]:465")
        var dumped = ""
        dump(url, to: &dumped)
        var dumpedCredentials = ""
        dump(url.credentials, to: &dumpedCredentials)
        for shown in ["\(url)", String(describing: url), String(reflecting: url), dumped, "\(url.credentials!)", String(reflecting: url.credentials!), dumpedCredentials] {
            #expect(!shown.contains(password), "\(shown)")
        }
        // Nor does a problem: it names what is wrong, not the characters.
        for text in ["smtp://user:\(password)/x@smtp.example.com", "smtp://user:\(password)@smtp.example.com:port", "smtp://user:\(password)"] {
            do {
                _ = try SMTPURL(text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(!"\(error)".contains(password))
            }
        }
    }
}
