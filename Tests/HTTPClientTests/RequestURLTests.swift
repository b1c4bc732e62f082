@testable import HTTPClient
import Testing

@Suite struct RequestURLTests {
    @Test func partsAreParsed() throws {
        let url = try RequestURL("HTTPS://AppleID.Apple.com/auth/token?x=1#frag")
        #expect(url.scheme == .https && url.host == "appleid.apple.com" && url.port == 443)
        #expect(url.target == "/auth/token?x=1")
        #expect(url.hostHeader == "appleid.apple.com")

        let v6 = try RequestURL("http://[::1]:8080")
        #expect(v6.host == "::1" && v6.port == 8080 && v6.target == "/" && v6.hostHeader == "[::1]:8080")
        #expect(try RequestURL("http://127.9.9.9:1?q").target == "/?q")
        #expect(try RequestURL("https://example.com:443/").hostHeader == "example.com")
    }

    @Test func onlyLoopbackMayUsePlainHTTP() throws {
        for url in ["http://localhost/", "http://127.0.0.1/", "http://127.255.0.1:9/", "http://[::1]/", "http://[::ffff:127.0.0.1]/"] {
            #expect(throws: Never.self) { try RequestURL(url) }
        }
        for url in ["http://localhost.example.com/", "http://128.0.0.1/", "http://[::]/", "http://0.0.0.0/", "http://[fe80::1]/"] {
            #expect(throws: HTTPClientError.plainHTTPNotAllowed) { try RequestURL(url) }
        }
    }

    @Test func theRequestEncoderOwnsFramingHeaders() throws {
        let url = try RequestURL("https://example.com/t")
        let request = HTTPClientRequest(
            method: "POST", url: "https://example.com/t",
            headers: [("Content-Length", "999"), ("Transfer-Encoding", "chunked"), ("User-Agent", "custom"), ("Accept", "application/json")],
            body: Array("a=b".utf8))
        let text = String(decoding: try RequestEncoder.encode(request, url: url), as: UTF8.self)
        #expect(
            text == "POST /t HTTP/1.1\r\nHost: example.com\r\nUser-Agent: custom\r\nAccept: application/json\r\n"
                + "Accept-Encoding: gzip\r\nContent-Length: 3\r\n\r\na=b")
        let get = String(decoding: try RequestEncoder.encode(HTTPClientRequest(url: "https://example.com/t"), url: url), as: UTF8.self)
        #expect(get == "GET /t HTTP/1.1\r\nHost: example.com\r\nUser-Agent: siwa-server\r\nAccept-Encoding: gzip\r\n\r\n")
    }
}
