import Testing
@testable import JSON

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#" {"s":"a\"b\\c\/d\u00e9\ud83d\ude00","i":-42,"big":1670016125295,"d":1.5e3,"t":true,"f":false,"n":null,"a":[1,[2],{}],"o":{"x":{}}} "#)
        let object = try #require(value.object)
        #expect(object["s"]?.string == "a\"b\\c/dé😀")
        #expect(object["i"] == .integer(-42))
        #expect(object["big"]?.integer == 1_670_016_125_295)
        #expect(object["d"] == .double(1500))
        #expect(object["t"]?.bool == true && object["f"]?.bool == false)
        #expect(object["n"]?.isNull == true)
        #expect(object["a"]?.array?.count == 3)
        #expect(object.keys == ["s", "i", "big", "d", "t", "f", "n", "a", "o"])
        #expect(object["missing"] == nil)
    }

    static let invalid: [String] = [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "'a'", "01", "-", "1.", ".5", "1e", "+1",
        "NaN", "Infinity", "tru", "nul", "\"unterminated", "\"bad \\x escape\"", "\"\\ud800\"", "\"\\udc00\"",
        "\"\\ud800\\u0041\"", "\"tab\there\"", "{\"a\":1}{", "[1] 2", "{\"sub\":\"a\",\"sub\":\"b\"}", "1e999",
    ]

    @Test(arguments: invalid)
    func refusesInvalidDocuments(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
    }

    @Test func limitsNestingAndSize() throws {
        let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        _ = try JSONParser.parse(fine)
        var small = JSONParser()
        small.maxBytes = 10
        #expect(throws: JSONParser.Failure.self) { try small.parse(Array("[1,2,3,4,5,6]".utf8)) }
    }

    /// RFC 8259 allows `\u0000`; this server keeps no text that may hold it (docs/reference/http-api.md), so the
    /// parser refuses it, escaped or raw, in values and in keys, with a reason that says so.
    @Test func refusesUPlus0000InStrings() {
        let documents: [[UInt8]] = [
            Array(#"{"a":"x\u0000y"}"#.utf8), Array(#"{"a\u0000":1}"#.utf8), Array(#"["\u0000"]"#.utf8), [0x22, 0x61, 0x00, 0x22],
            Array(#"{"a":"é\u0000"}"#.utf8),
        ]
        for document in documents {
            do {
                let value = try JSONParser.parse(document)
                Issue.record("accepted \(value)")
            } catch {
                #expect(error.isNULInString, "\(error)")
            }
        }
        // The neighbours stay fine.
        #expect((try? JSONParser.parse(#""\u0001\u0100""#)) == .string("\u{1}\u{100}"))
    }

    /// A request body's refusal says why, in the parser's words and where, never the bytes.
    @Test func aBodyThatIsNoObjectSaysWhy() throws {
        #expect(try JSONParser.object(Array(#"{"a":1}"#.utf8))["a"] == .integer(1))
        #expect(throws: JSONParser.NotAnObject(description: "the body must be a JSON object")) { try JSONParser.object(Array("[1]".utf8)) }
        #expect(throws: JSONParser.NotAnObject(description: "the body is not JSON: U+0000 in a string at byte 18")) {
            try JSONParser.object(Array(#"{"a":"secret\u0000"}"#.utf8))
        }
    }

    @Test func largeIntegersFallBackToDoubles() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .integer(Int64.max))
        #expect(try JSONParser.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
    }

    /// Integers are read from the digits without making text first; the edges stay where
    /// `Int64(text)` put them.
    @Test func integersAreReadExactlyToTheEdges() throws {
        #expect(try JSONParser.parse("-9223372036854775808") == .integer(Int64.min))
        #expect(try JSONParser.parse("-9223372036854775809") == .double(-9_223_372_036_854_775_808))
        #expect(try JSONParser.parse("92233720368547758070") == .double(92_233_720_368_547_758_080))
        #expect(try JSONParser.parse("-0") == .integer(0))
        #expect(try JSONParser.parse("0") == .integer(0))
        #expect(try JSONParser.parse("[1800000000,-1,10]") == .array([.integer(1_800_000_000), .integer(-1), .integer(10)]))
        #expect(try JSONParser.parse("1.0") == .double(1))
        #expect(try JSONParser.parse("1e2") == .double(100))
    }

    /// Duplicates are found by key as text, however a key is spelled: escaped, or another
    /// Unicode spelling of the same text (the scan skips only plain ASCII keys whose bytes differ).
    @Test(arguments: [
        #"{"a":1,"\u0061":2}"#, #"{"\u0061":1,"a":2}"#, #"{"K":1,"\u212a":2}"#, "{\"K\":1,\"\u{212A}\":2}",
        "{\"\u{212A}\":1,\"K\":2}", "{\"\u{E9}\":1,\"e\u{301}\":2}", #"{"is_private_email":1,"x":0,"is_private_email":2}"#,
        #"{"abcdefgh":1,"abcdefgX":0,"abcdefgh":2}"#,
    ])
    func duplicateKeysAreRefusedHoweverSpelled(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
    }

    /// Keys alike in length and first bytes are still different keys.
    @Test func keysThatDifferLateAreDistinct() throws {
        let long = String(repeating: "k", count: 200)
        let text = #"{"abcdefgh":1,"abcdefgX":2,"\#(long)a":3,"\#(long)b":4,"\#(long)":5,"e\u0301":6,"f":7}"#
        let object = try #require(try JSONParser.parse(text).object)
        #expect(object.keys == ["abcdefgh", "abcdefgX", long + "a", long + "b", long, "e\u{301}", "f"])
        #expect(object["abcdefgX"] == .integer(2) && object[long + "b"] == .integer(4))
    }
}

@Suite struct JSONWriterTests {
    @Test func writesCompactJSONInMemberOrder() {
        let value = JSONValue.object(JSONObject([
            ("b", .integer(1)), ("a", .array([.bool(true), .null, .double(0.5)])), ("s", .string("x")),
        ]))
        #expect(JSONWriter.string(value) == #"{"b":1,"a":[true,null,0.5],"s":"x"}"#)
    }

    @Test func escapesForJSONAndForHTMLScripts() {
        #expect(JSONWriter.string(.string("q\"b\\n\n</script>&\u{2028}\u{01}é")) == #""q\"b\\n\n\u003c/script\u003e\u0026\u2028\u0001é""#)
    }

    /// U+2028/U+2029 are E2 80 A8/A9 in UTF-8; other E2 sequences (€, ‧, →) pass through.
    @Test func escapesOnlyTheTwoLineSeparatorsAmongE2Sequences() {
        #expect(JSONWriter.string(.string("€‧\u{2029}→\u{2028}\u{7F}")) == #""€‧\u2029→\u2028\u007f""#)
        #expect(JSONWriter.string(.string("")) == "\"\"")
    }

    /// Any string survives writing and parsing back, whatever mix of scalars it holds.
    @Test func randomStringsRoundTrip() throws {
        // Not U+0000, which the parser refuses (`refusesUPlus0000InStrings`).
        let alphabet: [Unicode.Scalar] = ["a", "\"", "\\", "<", "&", "\u{1}", "\u{1F}", "\u{7F}", "é", "€", "\u{2028}", "\u{2029}", "\u{1F600}", "\n"]
        for _ in 0..<500 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...24) { scalars.append(alphabet.randomElement()!) }
            let string = String(scalars)
            #expect(try JSONParser.parse(JSONWriter.string(.string(string))) == .string(string))
        }
    }

    @Test func roundTrips() throws {
        let text = #"{"iss":"https://appleid.apple.com","aud":["a","b"],"exp":1700000000,"email_verified":"true","nested":{"k":[{}]}}"#
        #expect(JSONWriter.string(try JSONParser.parse(text)) == text)
    }

    /// 130,000 short distinct keys (about 1 MiB) parse, and a repeat at the very end is still
    /// found: duplicates are checked through a set past a few members, not by a scan each.
    @Test func manyKeysAreCheckedForDuplicatesInLinearTime() throws {
        var text = "{"
        for index in 0..<130_000 { text += "\"k\(index)\":0," }
        let distinct = text.dropLast() + "}"
        var parser = JSONParser()
        parser.maxBytes = 4 << 20
        #expect(try parser.parse(Array(distinct.utf8)).object?.members.count == 130_000)
        let repeated = text + "\"k5\":1}"
        #expect(throws: JSONParser.Failure.self) { try parser.parse(Array(repeated.utf8)) }
    }
}
