@testable import SMTP
import Testing

@Suite struct SMTPDataEncoderTests {
    private func encoded(_ text: String) -> String? {
        SMTPDataEncoder.encode(Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aLineStartingWithADotIsDoubled() {
        #expect(encoded("first\r\n.\r\n.hidden\r\nmid.dle\r\n..two\r\n") == "first\r\n..\r\n..hidden\r\nmid.dle\r\n...two\r\n.\r\n")
        #expect(encoded(".at the start") == "..at the start\r\n.\r\n")
    }

    @Test func lineEndsBecomeCRLF() {
        #expect(encoded("a\nb\rc\r\nd") == "a\r\nb\r\nc\r\nd\r\n.\r\n")
        // A bare LF or CR followed by a dot is a line start too.
        #expect(encoded("a\n.b\r.c") == "a\r\n..b\r\n..c\r\n.\r\n")
        #expect(encoded("\n\n") == "\r\n\r\n.\r\n")
        #expect(encoded("") == ".\r\n")
    }

    @Test func aLineOver998OctetsIsRefused() {
        #expect(encoded(String(repeating: "x", count: 998)) != nil)
        // The doubled dot does not count (RFC 5321 §4.5.3.1.6).
        #expect(encoded("." + String(repeating: "x", count: 997)) != nil)
        #expect(encoded(String(repeating: "x", count: 999)) == nil)
        #expect(encoded("short\r\n" + String(repeating: "x", count: 999) + "\r\n") == nil)
    }
}
