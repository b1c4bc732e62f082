import Testing
import WireFormat

@Suite struct FormURLEncodingTests {
    @Test func everythingButUnreservedIsPercentEncoded() {
        let encoded = FormURLEncoding.encode([
            ("client_secret", "eyJ+a/b=c"), ("redirect_uri", "https://example.com/cb?a=1&b=2"), ("name", "Jane Doe"),
            ("utf8", "é€"), ("keep", "AZaz09-._~"),
        ])
        #expect(
            String(decoding: encoded, as: UTF8.self)
                == "client_secret=eyJ%2Ba%2Fb%3Dc&redirect_uri=https%3A%2F%2Fexample.com%2Fcb%3Fa%3D1%26b%3D2&name=Jane%20Doe"
                + "&utf8=%C3%A9%E2%82%AC&keep=AZaz09-._~")
    }

    @Test func namesAreEncodedTooAndEmptyIsEmpty() {
        #expect(String(decoding: FormURLEncoding.encode([("a b", ""), ("&", "=")]), as: UTF8.self) == "a%20b=&%26=%3D")
        #expect(FormURLEncoding.encode([]).isEmpty)
        #expect(FormURLEncoding.escape("") == "")
    }

    /// Each ASCII character: the 66 unreserved ones as they are, the rest as `%XX` upper-case.
    @Test func escapesEveryASCIICharacter() {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        for byte in UInt8(0)...0x7F {
            let text = String(UnicodeScalar(byte))
            let expected = unreserved.contains(byte) ? text : "%" + Hex.encode([byte], uppercase: true)
            #expect(FormURLEncoding.escape(text) == expected, "\(byte)")
        }
    }

    @Test func escapeIsWhatEncodeWritesForEachPart() {
        let name = "a+b c", value = "https://x/?q=1&r=é"
        #expect(String(decoding: FormURLEncoding.encode([(name, value)]), as: UTF8.self)
            == FormURLEncoding.escape(name) + "=" + FormURLEncoding.escape(value))
    }
}
