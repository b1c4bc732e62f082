@testable import SMTP
import Testing
import WireFormat

@Suite struct MailMessageTests {
    private static let date: Int64 = 1_796_119_200  // Tue, 01 Dec 2026 10:00:00 +0000

    private func message(
        from: MailAddress? = nil, to: [MailAddress]? = nil, subject: String = "Verify your email", text: String = "Hello", html: String = "<p>Hello</p>",
        messageID: String = "abc.123@siwa.example.com"
    ) throws -> MailMessage {
        try MailMessage(
            from: from ?? MailAddress("noreply@siwa.example.com", displayName: "Siwa"), to: to ?? [MailAddress("kim@example.com")],
            subject: subject, text: text, html: html, messageID: messageID, date: Self.date)
    }

    /// The rendered message's header fields, unfolded (RFC 5322 §2.2.3), and what follows them.
    private func parts(_ message: MailMessage) -> (fields: [(name: String, value: String)], body: String, raw: String) {
        let raw = String(decoding: message.rendered(), as: UTF8.self)
        let split = raw.firstRange(of: "\r\n\r\n")!
        let head = raw[..<split.lowerBound].replacing("\r\n ", with: " ")
        let fields = head.split(separator: "\r\n").map { line in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), String(line[line.index(after: colon)...].dropFirst()))
        }
        return (fields, String(raw[split.upperBound...]), raw)
    }

    private func field(_ name: String, _ message: MailMessage) -> String? {
        parts(message).fields.first { $0.name == name }?.value
    }

    @Test func theHeadersAreThoseOfTheSpec() throws {
        let (fields, _, _) = parts(try message())
        #expect(fields.map(\.name) == ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"])
        #expect(fields.map(\.value) == [
            "Siwa <noreply@siwa.example.com>", "kim@example.com", "Verify your email", "Tue, 01 Dec 2026 10:00:00 +0000",
            "<abc.123@siwa.example.com>", "1.0", "multipart/alternative; boundary=\"=_siwa-alternative\"",
        ])
        #expect(try field("Message-ID", message(messageID: "<kept@example.com>")) == "<kept@example.com>")
    }

    @Test func theDateIsRFC5322() {
        #expect(MessageDate.format(0) == "Thu, 01 Jan 1970 00:00:00 +0000")
        #expect(MessageDate.format(1_709_251_199) == "Thu, 29 Feb 2024 23:59:59 +0000")
        #expect(MessageDate.format(Self.date) == "Tue, 01 Dec 2026 10:00:00 +0000")
    }

    @Test func theBodyIsMultipartAlternativeInUTF8() throws {
        let (_, body, _) = parts(try message(text: "Your code: 1234\nBye", html: "<p>Your code: <b>1234</b></p>"))
        #expect(body == """
            --=_siwa-alternative\r
            Content-Type: text/plain; charset=UTF-8\r
            Content-Transfer-Encoding: quoted-printable\r
            \r
            Your code: 1234\r
            Bye\r
            --=_siwa-alternative\r
            Content-Type: text/html; charset=UTF-8\r
            Content-Transfer-Encoding: quoted-printable\r
            \r
            <p>Your code: <b>1234</b></p>\r
            --=_siwa-alternative--\r

            """)
    }

    @Test func koreanTextIsBase64AndEnglishQuotedPrintable() throws {
        let korean = MIMETextPart(subtype: "plain", text: "안녕하세요. 이메일 주소를 확인해 주세요.")
        #expect(korean.transferEncoding == .base64)
        let decoded = Base64.standard.decode(String(decoding: korean.body, as: UTF8.self).replacing("\r\n", with: ""))
        #expect(decoded.map { String(decoding: $0, as: UTF8.self) } == "안녕하세요. 이메일 주소를 확인해 주세요.")

        let english = MIMETextPart(subtype: "plain", text: "Welcome to the Caf\u{E9}: 2 + 2 = 4 \nSee you soon ")
        #expect(english.transferEncoding == .quotedPrintable)
        #expect(String(decoding: english.body, as: UTF8.self) == "Welcome to the Caf=C3=A9: 2 + 2 =3D 4=20\r\nSee you soon=20")
    }

    @Test func quotedPrintableLinesStayWithin76() {
        let link = "https://siwa.example.com/verify-email?code=" + String(repeating: "AbC-_9", count: 30)
        let encoded = String(decoding: QuotedPrintable.encode(Array((link + "\r\n" + String(repeating: "é", count: 100)).utf8)), as: UTF8.self)
        let lines = encoded.split(separator: "\r\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.utf8.count <= 76 })
        // Undoing the soft breaks gives the link back whole.
        #expect(encoded.replacing("=\r\n", with: "").hasPrefix(link.replacing("=", with: "=3D") + "\r\n"))
        // An escape is never cut by a soft break.
        #expect(lines.allSatisfy { !$0.hasSuffix("=C") && !$0.hasSuffix("=C3=A") })
    }

    @Test func everyLineIsWithin998AndMostHeadersWithin78() throws {
        let longName = String(repeating: "김철수 ", count: 40)
        let longSubject = String(repeating: "확인 ", count: 80) + String(repeating: "x", count: 300)
        let rendered = try message(
            from: MailAddress("noreply@siwa.example.com", displayName: longName), subject: longSubject,
            text: String(repeating: "y", count: 5000), html: String(repeating: "한", count: 3000)
        ).rendered()
        let lines = String(decoding: rendered, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.utf8.count <= 998 })
        #expect(lines.allSatisfy { $0.utf8.count <= 78 }, "\(lines.map(\.utf8.count).max() ?? 0)")
    }

    @Test func nonASCIINamesAndSubjectsAreRFC2047Encoded() throws {
        let mail = try message(
            from: MailAddress("noreply@siwa.example.com", displayName: "시와 서버"), to: [MailAddress("kim@example.com", displayName: "김철수")],
            subject: "이메일 주소를 확인해 주세요")
        #expect(field("From", mail) == "=?UTF-8?B?\(Base64.standard.encode("시와 서버"))?= <noreply@siwa.example.com>")
        #expect(field("To", mail).map(decodeEncodedWords) == "김철수 <kim@example.com>")
        #expect(field("Subject", mail).map(decodeEncodedWords) == "이메일 주소를 확인해 주세요")
        #expect(parts(mail).raw.utf8.allSatisfy { $0 < 0x80 })

        // ASCII that a decoder could take for an encoded-word, or punctuation, is encoded too.
        #expect(try field("Subject", message(subject: "=?UTF-8?B?aGk=?=")).map(decodeEncodedWords) == "=?UTF-8?B?aGk=?=")
        let punctuated = try message(to: [MailAddress("pat@example.com", displayName: "O'Brien, Pat \"PJ\"")])
        #expect(field("To", punctuated).map(decodeEncodedWords) == "O'Brien, Pat \"PJ\" <pat@example.com>")
        #expect(field("To", punctuated)?.hasPrefix("=?UTF-8?B?") == true)
    }

    @Test func aLongSubjectIsCutBetweenWholeCharacters() throws {
        let subject = String(repeating: "가나다라마바사아자차카타파하", count: 6) + " 👩‍👩‍👧"
        let value = try #require(field("Subject", message(subject: subject)))
        let words = value.split(separator: " ")
        #expect(words.count > 3)
        for word in words {
            let inner = word.dropFirst("=?UTF-8?B?".count).dropLast(2)
            let bytes = try #require(Base64.standard.decode(String(inner)))
            // Each word on its own is valid UTF-8: no character was cut.
            #expect(String(validating: bytes, as: UTF8.self) != nil)
        }
        #expect(decodeEncodedWords(value) == subject)
    }

    @Test func headerInjectionThroughNamesAndSubjectsReachesNoHeader() throws {
        let attacks = [
            "Eve\r\nBcc: victim@example.com", "Eve\nBcc: victim@example.com", "Eve\rBcc: victim@example.com",
            "Eve\r\n\r\n<html>forged body", "Eve\u{85}Bcc: victim@example.com", "Eve\u{2028}Bcc: victim@example.com", "Eve\0Bcc: x@y",
            "Eve\r\n Bcc: folded@example.com",
        ]
        for attack in attacks {
            let mail = try message(
                from: MailAddress("noreply@siwa.example.com", displayName: attack), to: [MailAddress("kim@example.com", displayName: attack)],
                subject: attack)
            let (fields, body, raw) = parts(mail)
            #expect(fields.map(\.name) == ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"], "\(attack.debugDescription)")
            #expect(!raw.contains("\nBcc") && !body.contains("forged body"))
            // Every CR and LF in the message is one of its own CRLFs.
            let bytes = mail.rendered()
            for (index, byte) in bytes.enumerated() {
                if byte == 0x0D { #expect(index + 1 < bytes.count && bytes[index + 1] == 0x0A) }
                if byte == 0x0A { #expect(index > 0 && bytes[index - 1] == 0x0D) }
            }
            let subject = try #require(fields.first { $0.name == "Subject" }?.value)
            #expect(!decodeEncodedWords(subject).unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x85 || $0.value == 0x2028 })
        }
        #expect(try message(subject: "Hi\r\nBcc: victim@example.com").subject == "Hi  Bcc: victim@example.com")
    }

    @Test func addressesAndMessageIDsWithLineBreaksAreRefused() throws {
        for address in ["kim@example.com\r\nBcc: victim@example.com", "kim@example.com\n", "kim @example.com", "<kim@example.com>", "kim@exa\rmple.com",
                        "kim", "@example.com", "kim@", "kim@-example.com", "kim..lee@example.com", ".kim@example.com", "김@example.com",
                        "kim@example.com>", "\"kim\"@example.com", String(repeating: "a", count: 65) + "@example.com"] {
            #expect(throws: MailMessageError.invalidAddress, "\(address.debugDescription)") { try MailAddress(address) }
        }
        for id in ["abc@example.com\r\nBcc: victim@example.com", "abc", "<abc>", "a b@example.com", "abc@exa mple.com", "<abc@example.com",
                   "abc@example.com\n", "a@b@c", String(repeating: "a", count: 250) + "@b"] {
            #expect(throws: MailMessageError.invalidMessageID, "\(id.debugDescription)") { try message(messageID: id) }
        }
        #expect(throws: MailMessageError.noRecipient) { try message(to: []) }
        #expect(try MailAddress("o'brien+tag@mail.example.co.kr").address == "o'brien+tag@mail.example.co.kr")
        #expect(try MailAddress("root@localhost").address == "root@localhost")
    }

    @Test func fromTextIsParsed() throws {
        #expect(try MailAddress(parsing: "noreply@example.com") == MailAddress("noreply@example.com"))
        #expect(try MailAddress(parsing: "  Siwa Server <noreply@example.com> ") == MailAddress("noreply@example.com", displayName: "Siwa Server"))
        #expect(try MailAddress(parsing: "\"Siwa \\\"S\\\" Server\" <noreply@example.com>") == MailAddress("noreply@example.com", displayName: "Siwa \"S\" Server"))
        #expect(try MailAddress(parsing: "<noreply@example.com>") == MailAddress("noreply@example.com"))
        #expect(try MailAddress(parsing: "시와 <noreply@example.com>").displayName == "시와")
        for text in ["Siwa <noreply@example.com", "Siwa noreply@example.com>", "Siwa <not an address>", "Siwa <a@b> <c@d>", "Siwa\r\n <noreply@example.com>", ""] {
            #expect(throws: (any Error).self, "\(text.debugDescription)") { try MailAddress(parsing: text) }
        }
    }

    @Test func theSameMessageRendersTheSameBytes() throws {
        #expect(try message().rendered() == message().rendered())
    }

    /// Unfolded header text with its encoded-words decoded and joined (RFC 2047 §6.2: the
    /// white space between two encoded-words is not part of the text).
    private func decodeEncodedWords(_ text: String) -> String {
        var output = ""
        var previousWasEncoded = false
        var pendingSpace = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if word.hasPrefix("=?UTF-8?B?"), word.hasSuffix("?="),
                let bytes = Base64.standard.decode(String(word.dropFirst(10).dropLast(2)))
            {
                if !previousWasEncoded { output += pendingSpace }
                output += String(decoding: bytes, as: UTF8.self)
                previousWasEncoded = true
            } else {
                output += pendingSpace + word
                previousWasEncoded = false
            }
            pendingSpace = " "
        }
        return output
    }
}
