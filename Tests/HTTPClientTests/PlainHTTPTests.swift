import HTTPClient
import HTTPServer
import Testing

/// `http://` is for the simulator on loopback only.
@Suite struct PlainHTTPTests {
    @Test func plainHTTPToLoopbackWorks() async throws {
        var router = Router()
        router.add(.get, "/x") { _ in HTTPResponse(contentType: "text/plain", body: "hi") }
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 1), router: router)
        let port = try server.start()
        let client = try HTTPClient()
        for host in ["127.0.0.1", "localhost"] {
            let response = try await client.send(HTTPClientRequest(url: "http://\(host):\(port)/x"), idempotent: true)
            #expect(response.status == 200)
            #expect(response.text == "hi")
        }
        let missing = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/nope"), idempotent: true)
        #expect(missing.status == 404)
        await server.stop()
    }

    @Test(arguments: ["http://example.com/auth/token", "http://10.0.0.1/", "http://[::2]:80/", "HTTP://appleid.apple.com/", "http://127.example.com/"])
    func plainHTTPElsewhereIsRefusedWithoutTouchingTheNetwork(url: String) async throws {
        // The refusal comes from the URL alone: a lookup or connect would fail differently
        // here (no network) or succeed.
        let client = try HTTPClient()
        let error = await failure { () async throws(HTTPClientError) in
            try await client.send(HTTPClientRequest(method: "POST", url: url, body: [1]), idempotent: false)
        }
        #expect(error == .plainHTTPNotAllowed)
    }

    @Test(arguments: ["ftp://example.com/", "https://", "https://user:pass@example.com/", "https://exa mple.com/", "https://example.com:0/",
        "https://example.com:65536/", "https://[::1/", "https://example.com/a b", "example.com/x"])
    func malformedURLsAreRefused(url: String) async throws {
        let client = try HTTPClient()
        let error = await failure { () async throws(HTTPClientError) in
            try await client.send(HTTPClientRequest(url: url), idempotent: true)
        }
        #expect(error == .invalidURL)
    }

    @Test func headersWithLineBreaksAreRefused() async throws {
        let client = try HTTPClient()
        let error = await failure { () async throws(HTTPClientError) in
            try await client.send(HTTPClientRequest(url: "http://127.0.0.1:9/", headers: [("X-A", "b\r\nX-Injected: 1")]), idempotent: true)
        }
        guard case .invalidRequest = error else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
    }
}
