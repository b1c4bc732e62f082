import Testing
import WireFormat

@Suite struct TrimmingTests {
    @Test func httpWhitespaceIsSpacesAndTabsOnly() {
        #expect(" \t gzip \t ".trimmingHTTPWhitespace() == "gzip")
        #expect("a b".trimmingHTTPWhitespace() == "a b")
        #expect("\r\nx\n".trimmingHTTPWhitespace() == "\r\nx\n")
        #expect("\u{A0}x\u{A0}".trimmingHTTPWhitespace() == "\u{A0}x\u{A0}")
        #expect(" \t ".trimmingHTTPWhitespace() == "")
        #expect("".trimmingHTTPWhitespace() == "")
    }

    @Test func worksOnSubstringsInPlace() {
        let header = "a, b ,\tc"
        #expect(header.split(separator: ",").map { $0.trimmingHTTPWhitespace() } == ["a", "b", "c"])
        let slice = header.split(separator: ",")[1]
        #expect(slice.trimmingHTTPWhitespace().startIndex > slice.startIndex)
    }

    @Test func unicodeWhitespaceIncludesLineBreaksAndNoBreakSpaces() {
        #expect(" \t\r\n\u{A0}\u{2003}\u{3000}x y\u{2028}\n".trimmingWhitespaceAndNewlines() == "x y")
        #expect("\n\n".trimmingWhitespaceAndNewlines() == "")
        #expect("".trimmingWhitespaceAndNewlines() == "")
        #expect("x".trimmingWhitespaceAndNewlines() == "x")
    }

    /// By Character: a space followed by a combining mark is one character, which the HTTP trim
    /// keeps (it is not a bare space) and the Unicode trim drops (`isWhitespace` looks at its
    /// first scalar).
    @Test func aSpaceWithACombiningMarkIsOneCharacter() {
        #expect(" \u{301}x".trimmingHTTPWhitespace() == " \u{301}x")
        #expect(" \u{301}x".trimmingWhitespaceAndNewlines() == "x")
        #expect("x\u{301} ".trimmingWhitespaceAndNewlines() == "x\u{301}")
    }

    @Test func anyPredicate() {
        #expect("  a  ".trimming { $0 == " " } == "a")
        #expect("\ta\t".trimming { $0 == " " } == "\ta\t")
        #expect("xxaxx".trimming { $0 == "x" } == "a")
        #expect("xxxx".trimming { $0 == "x" } == "")
    }
}
