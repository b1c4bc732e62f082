import HTTPClient
import Testing

@Suite struct FormURLEncodedTests {
    @Test func everythingButUnreservedIsPercentEncoded() {
        let encoded = HTTPClient.formURLEncoded([
            ("client_secret", "eyJ+a/b=c"), ("redirect_uri", "https://example.com/cb?a=1&b=2"), ("name", "Jane Doe"),
            ("utf8", "é€"), ("keep", "AZaz09-._~"),
        ])
        #expect(
            String(decoding: encoded, as: UTF8.self)
                == "client_secret=eyJ%2Ba%2Fb%3Dc&redirect_uri=https%3A%2F%2Fexample.com%2Fcb%3Fa%3D1%26b%3D2&name=Jane%20Doe"
                + "&utf8=%C3%A9%E2%82%AC&keep=AZaz09-._~")
    }

    @Test func namesAreEncodedTooAndEmptyIsEmpty() {
        #expect(String(decoding: HTTPClient.formURLEncoded([("a b", ""), ("&", "=")]), as: UTF8.self) == "a%20b=&%26=%3D")
        #expect(HTTPClient.formURLEncoded([]).isEmpty)
    }
}
