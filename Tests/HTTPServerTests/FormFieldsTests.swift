import HTTPServer
import WireFormat
import Testing

/// `application/x-www-form-urlencoded` decoding, byte for byte (Fuzz/FormFields checks the same
/// against a reference decoder; the cases here are what it found).
@Suite struct FormFieldsTests {
    @Test func fieldsAreDecodedInOrder() throws {
        let form = try FormFields(parsing: "state=s%20t&code=c+1&empty=&flag")
        #expect(form.fields.map(\.name) == ["state", "code", "empty", "flag"])
        #expect(form["state"] == "s t")
        #expect(form["code"] == "c 1")
        #expect(form["empty"] == "")
        #expect(form.nonEmpty("empty") == nil)
    }

    /// A combining mark right after `=` or `&` makes one Character with it; splitting on
    /// Characters missed the separator and read `b=\u{301}` as a field named `b=\u{301}`.
    @Test func separatorsAreBytesEvenBeforeACombiningMark() throws {
        let form = try FormFields(parsing: Array("b=\u{301}&\u{301}c=1".utf8))
        #expect(form.fields.count == 2)
        #expect(form["b"] == "\u{301}")
        #expect(form["\u{301}c"] == "1")
    }

    /// Names are compared as bytes: `é` precomposed and `e` + combining acute are two names,
    /// as every other decoder of the same body sees them.
    @Test func namesThatAreOnlyCanonicallyEquivalentAreDistinct() throws {
        let form = try FormFields(parsing: "%C3%A9=1&e%CC%81=2")
        #expect(form.fields.count == 2)
        #expect(form["\u{E9}"] == "1")
        #expect(form["e\u{301}"] == "2")
    }

    @Test func repeatsAndBadEscapesAndNonUTF8AreRefused() {
        #expect(throws: FormFields.Failure.duplicate("a")) { try FormFields(parsing: "a=1&a=2") }
        #expect(throws: FormFields.Failure.malformed) { try FormFields(parsing: "a=%zz") }
        #expect(throws: FormFields.Failure.malformed) { try FormFields(parsing: "a=%C3") }
        #expect(throws: FormFields.Failure.malformed) { try FormFields(parsing: [0x61, 0x3D, 0xFF]) }
    }

    /// docs/reference/http-api.md: no field, name or value, may hold U+0000, escaped or raw.
    @Test func uPlus0000IsRefusedEscapedOrRaw() {
        for body in ["a=%00", "a=x%00y", "%00=1", "a=1&b=%00"] {
            #expect(throws: FormFields.Failure.malformed, "\(body)") { try FormFields(parsing: body) }
        }
        #expect(throws: FormFields.Failure.malformed) { try FormFields(parsing: [0x61, 0x3D, 0x78, 0x00, 0x79]) }
        #expect(PercentDecoding.decode("a%00") == nil)
        #expect(PercentDecoding.decode("a%01") == "a\u{1}")
    }

    @Test func encodingRoundTrips() throws {
        let fields = [("name", "Ada Lovelace"), ("user", #"{"name":{"firstName":"Zoë"}}"#), ("x&y", "a=b+c")]
        let form = FormFields(fields: fields.map { (name: $0.0, value: $0.1) })
        let again = try FormFields(parsing: form.encoded())
        #expect(again.fields.map(\.name) == fields.map(\.0))
        #expect(again.fields.map(\.value) == fields.map(\.1))
    }

    @Test func aRepeatAmongManyFieldsIsFoundThroughTheSet() throws {
        let fields = (0..<50_000).map { "f\($0)=1" }.joined(separator: "&")
        #expect(try FormFields(parsing: fields).fields.count == 50_000)
        #expect(throws: FormFields.Failure.duplicate("f7")) { try FormFields(parsing: fields + "&f7=2") }
    }
}
