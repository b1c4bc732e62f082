import SMTP
import Testing

@Suite struct SMTPReplyParserTests {
    /// Every reply in `text`, fed whole, then fed one byte at a time: both must agree.
    private func replies(_ text: String, maxLineBytes: Int = SMTPReplyParser.defaultMaxLineBytes, maxLines: Int = 128) throws -> [SMTPReply] {
        var whole = SMTPReplyParser(maxLineBytes: maxLineBytes, maxLines: maxLines)
        whole.append(text.utf8)
        var all: [SMTPReply] = []
        while let reply = try whole.next() { all.append(reply) }

        var bytewise = SMTPReplyParser(maxLineBytes: maxLineBytes, maxLines: maxLines)
        var again: [SMTPReply] = []
        for byte in text.utf8 {
            bytewise.append([byte])
            while let reply = try bytewise.next() { again.append(reply) }
        }
        #expect(again == all)
        return all
    }

    private func failure(_ text: String, maxLineBytes: Int = SMTPReplyParser.defaultMaxLineBytes, maxLines: Int = 128) -> SMTPReplyParser.Failure? {
        do {
            _ = try replies(text, maxLineBytes: maxLineBytes, maxLines: maxLines)
            return nil
        } catch let error as SMTPReplyParser.Failure {
            return error
        } catch {
            return nil
        }
    }

    @Test func aSingleLineReply() throws {
        #expect(try replies("220 mail.example.com ESMTP ready\r\n") == [SMTPReply(code: 220, lines: ["mail.example.com ESMTP ready"])])
    }

    @Test func aMultiLineReplyIsOneReplyWithEveryLine() throws {
        let text = "250-mail.example.com greets you\r\n250-PIPELINING\r\n250-AUTH PLAIN LOGIN\r\n250 STARTTLS\r\n"
        #expect(try replies(text) == [SMTPReply(code: 250, lines: ["mail.example.com greets you", "PIPELINING", "AUTH PLAIN LOGIN", "STARTTLS"])])
    }

    @Test func enhancedStatusCodesStayInTheText() throws {
        let reply = try #require(try replies("550 5.1.1 <bob@example.com>: Recipient address rejected\r\n").first)
        #expect(reply.code == 550)
        #expect(reply.text == "5.1.1 <bob@example.com>: Recipient address rejected")
        #expect(reply.isPermanentNegative && !reply.isTransientNegative && !reply.isPositiveCompletion)
    }

    @Test func aCodeAloneAndABareLineFeedAreAccepted() throws {
        #expect(try replies("250\r\n354 go ahead\n") == [SMTPReply(code: 250, lines: [""]), SMTPReply(code: 354, lines: ["go ahead"])])
    }

    @Test func repliesArriveOneAtATimeAndAnUnfinishedOneWaits() throws {
        var parser = SMTPReplyParser()
        parser.append("250 ok\r\n451-try\r\n".utf8)
        #expect(try parser.next() == SMTPReply(code: 250, lines: ["ok"]))
        #expect(try parser.next() == nil)
        #expect(!parser.isBetweenReplies)
        parser.append("451 later\r".utf8)
        #expect(try parser.next() == nil)
        #expect(parser.unreadByteCount == 10)
        parser.append("\n".utf8)
        let reply = try #require(try parser.next())
        #expect(reply.code == 451 && reply.lines == ["try", "later"] && reply.isTransientNegative)
        #expect(parser.isBetweenReplies && parser.unreadByteCount == 0)
    }

    @Test func bytesAfterAReplyAreNoticed() throws {
        // What a STARTTLS injection looks like to the client: more after the 220.
        var parser = SMTPReplyParser()
        parser.append("220 go ahead\r\n250 injected".utf8)
        #expect(try parser.next()?.code == 220)
        #expect(!parser.isBetweenReplies)
    }

    @Test func malformedLinesAreRefused() {
        for text in ["hello\r\n", "25\r\n", "2500 x\r\n", "250x\r\n", "099 no\r\n", "600 no\r\n", "1xx\r\n", "abc def\r\n", "\r\n", "250_x\r\n"] {
            #expect(failure(text) == .malformedLine, "\(text.debugDescription)")
        }
    }

    @Test func aMultiLineReplyMustKeepItsCode() {
        #expect(failure("250-one\r\n251 two\r\n") == .codeChanged)
    }

    @Test func limitsHold() {
        let long = "250 " + String(repeating: "x", count: 60) + "\r\n"
        #expect(failure(long, maxLineBytes: 64) == nil)
        #expect(failure("250 " + String(repeating: "x", count: 61) + "\r\n", maxLineBytes: 64) == .lineTooLong)
        // Without a line end, the limit still holds: the parser never buffers without bound.
        #expect(failure("250 " + String(repeating: "x", count: 100), maxLineBytes: 64) == .lineTooLong)
        #expect(failure(String(repeating: "250-x\r\n", count: 3) + "250 x\r\n", maxLines: 4) == nil)
        #expect(failure(String(repeating: "250-x\r\n", count: 4) + "250 x\r\n", maxLines: 4) == .tooManyLines)
    }

    @Test func afterAFailureTheParserStaysFailed() throws {
        var parser = SMTPReplyParser()
        parser.append("nonsense\r\n".utf8)
        #expect(throws: SMTPReplyParser.Failure.malformedLine) { try parser.next() }
        parser.append("250 fine\r\n".utf8)
        #expect(throws: SMTPReplyParser.Failure.malformedLine) { try parser.next() }
    }

    @Test func invalidUTF8InTheTextIsReplacedNotRefused() throws {
        var parser = SMTPReplyParser()
        parser.append([UInt8]("250 caf".utf8) + [0xE9] + [0x0D, 0x0A])
        #expect(try parser.next()?.text == "caf\u{FFFD}")
    }
}
