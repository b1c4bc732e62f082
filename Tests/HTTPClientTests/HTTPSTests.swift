import Foundation
import HTTPClient
import HTTPServer
import Synchronization
import TLS
import Testing
import TestSupport

/// The client over real TLS: an `HTTPServer` behind a `TLSTerminator` with a throwaway CA.
@Suite struct HTTPSTests {
    @Test func getAndPostSucceedOverHTTPS() async throws {
        let seen = Mutex<[String]>([])
        let fixture = try TLSFixture.start { router in
            router.add(.get, "/headers") { request in
                seen.withLock {
                    $0 = [request.headers["Host"] ?? "", request.headers["User-Agent"] ?? "", request.headers["Accept-Encoding"] ?? ""]
                }
                return HTTPResponse(contentType: "text/plain", body: "ok")
            }
        }
        let client = try fixture.client()

        let get = try await client.send(HTTPClientRequest(url: fixture.url("/hello")), idempotent: true)
        #expect(get.status == 200)
        #expect(get.text == "hi")
        #expect(get.header("content-type") == "text/plain")

        let body = Array("code=abc&grant_type=authorization_code".utf8)
        let post = try await client.send(
            HTTPClientRequest(method: "POST", url: fixture.url("/echo"), headers: [("Content-Type", "application/x-www-form-urlencoded")], body: body),
            idempotent: false)
        #expect(post.status == 200)
        #expect(post.body == body)

        _ = try await client.send(HTTPClientRequest(url: fixture.url("/headers")), idempotent: true)
        #expect(seen.withLock { $0 } == ["127.0.0.1:\(fixture.port)", "siwa-server", "gzip"])
        await fixture.stop()
    }

    @Test func aHostNameIsVerifiedAndItsAddressesTriedInTurn() async throws {
        // The leaf names localhost; the terminator listens on 127.0.0.1 only, so if ::1 comes
        // first it is refused and the next address is tried.
        let fixture = try TLSFixture.start()
        let response = try await fixture.client().send(HTTPClientRequest(url: fixture.url("/hello", host: "localhost")), idempotent: true)
        #expect(response.text == "hi")
        await fixture.stop()
    }

    @Test func aClientThatDoesNotTrustTheCAFails() async throws {
        let fixture = try TLSFixture.start()
        let otherCA = try CertificateAuthority()
        let strangers = [
            try HTTPClient(configuration: HTTPClientConfiguration(extraCAPEM: otherCA.certificatePEM, trustOnlyExtraCAs: true)),
            // The system store does not know a CA made a moment ago either.
            try HTTPClient(configuration: HTTPClientConfiguration()),
            // Trusting only extra CAs with none given trusts nothing.
            try HTTPClient(configuration: HTTPClientConfiguration(trustOnlyExtraCAs: true)),
        ]
        for stranger in strangers {
            let error = await failure { () async throws(HTTPClientError) in
                try await stranger.send(HTTPClientRequest(url: fixture.url("/hello")), idempotent: true)
            }
            #expect(error?.isTLSFailure == true, "\(String(describing: error))")
            #expect(error?.description.contains("certificate verify failed") == true)
        }
        #expect(fixture.terminator.acceptedConnections == 3)
        await fixture.stop()
    }

    @Test func aCertificateForAnotherHostFails() async throws {
        let fixture = try TLSFixture.start(dnsNames: ["other.example"], ipAddresses: [])
        let client = try fixture.client()
        for host in ["127.0.0.1", "localhost"] {
            let error = await failure { () async throws(HTTPClientError) in
                try await client.send(HTTPClientRequest(url: fixture.url("/hello", host: host)), idempotent: true)
            }
            #expect(error?.isTLSFailure == true, "\(String(describing: error))")
            #expect(error?.description.contains("mismatch") == true, "\(String(describing: error))")
        }
        await fixture.stop()
    }

    /// A trusted CA's leaf with `CN=localhost` and no subjectAltName was once accepted for
    /// `localhost` (OpenSSL's fallback to the subject): names count only in the SAN.
    @Test func aCertificateNamingItsHostOnlyInTheCommonNameFails() async throws {
        let fixture = try TLSFixture.start(commonNameOnly: "localhost")
        let client = try fixture.client()
        let error = await failure { () async throws(HTTPClientError) in
            try await client.send(HTTPClientRequest(url: fixture.url("/hello", host: "localhost")), idempotent: true)
        }
        #expect(error?.isTLSFailure == true, "\(String(describing: error))")
        #expect(error?.description.contains("mismatch") == true, "\(String(describing: error))")
        await fixture.stop()
    }

    @Test func anExtraCAFileIsTrusted() async throws {
        let fixture = try TLSFixture.start()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("siwa-ca-\(UUID().uuidString).pem").path
        try fixture.authority.certificatePEM.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(extraCAFile: path))
        let response = try await client.send(HTTPClientRequest(url: fixture.url("/hello")), idempotent: true)
        #expect(response.text == "hi")
        #expect(throws: (any Error).self) { try HTTPClient(configuration: HTTPClientConfiguration(extraCAFile: path + ".missing")) }
        await fixture.stop()
    }

    @Test func keepAliveReusesOneConnection() async throws {
        let fixture = try TLSFixture.start()
        let client = try fixture.client()
        for _ in 0..<3 {
            let response = try await client.send(HTTPClientRequest(url: fixture.url("/hello")), idempotent: true)
            #expect(response.text == "hi")
        }
        let post = try await client.send(HTTPClientRequest(method: "POST", url: fixture.url("/echo"), body: [1, 2, 3]), idempotent: false)
        #expect(post.body == [1, 2, 3])
        #expect(fixture.terminator.acceptedConnections == 1)
        await fixture.stop()
    }

    @Test func gzipResponsesAreInflated() async throws {
        let text = String(repeating: "{\"kid\":\"abc\",\"alg\":\"RS256\"},", count: 200)
        let fixture = try TLSFixture.start { router in
            router.add(.get, "/keys") { _ in HTTPResponse.json(200, text) }
        }
        let response = try await fixture.client().send(HTTPClientRequest(url: fixture.url("/keys")), idempotent: true)
        #expect(response.text == text)
        // The server compressed it (it was asked to); the client removed the wire headers.
        #expect(response.header("Vary") == "Accept-Encoding")
        #expect(response.header("Content-Encoding") == nil)
        #expect(response.header("Content-Length") == nil)
        await fixture.stop()
    }

    @Test func thirtyTwoSlowCallsRunAtOnce() async throws {
        // Counted by the server, whose handlers wait at a gate until all 32 are in: one at a
        // time (or a few) would never get there, however long the test waited.
        let inFlight = Atomic<Int>(0)
        let gate = Gate.uniqueName()
        let fixture = try TLSFixture.start { router in
            router.add(.get, "/counted") { _ in
                inFlight.add(1, ordering: .sequentiallyConsistent)
                await Gate.shared.wait(gate)
                return HTTPResponse(contentType: "text/plain", body: "slept")
            }
        }
        let client = try fixture.client()
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    try await client.send(HTTPClientRequest(url: fixture.url("/counted")), idempotent: true).text
                }
            }
            #expect(try await eventually { inFlight.load(ordering: .sequentiallyConsistent) == 32 }, "\(inFlight.load(ordering: .sequentiallyConsistent)) at once")
            Gate.shared.open(gate)
            for try await text in group { #expect(text == "slept") }
        }
        await fixture.stop()
    }
}
