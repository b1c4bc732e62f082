import Foundation
import Glibc
import HTTPClient
import HTTPServer
import TLS
import Testing

@Suite struct TLSTerminatorTests {
    @Test func aClientThatNeverHandshakesIsDropped() async throws {
        let authority = try CertificateAuthority()
        let terminator = TLSTerminator(context: try TLSServerContext(try authority.issue()), backendPort: 9, handshakeTimeout: .milliseconds(200))
        let port = try terminator.start()
        defer { terminator.stop() }
        let (fd, connected) = LoopbackSocket.connectNonBlocking(port: port, milliseconds: 1000)
        defer { close(fd) }
        try #require(connected)
        // Wait for the terminator to close its end: poll sees the hang-up and recv reads 0.
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let elapsed = await seconds { _ = poll(&descriptor, 1, 5000) }
        var byte: UInt8 = 0
        #expect(recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) == 0)
        #expect(elapsed < 4, "took \(elapsed) s")
    }

    @Test func stopClosesTheListenerAndOpenConnectionsPromptly() async throws {
        let fixture = try TLSFixture.start()
        let client = try fixture.client()
        // Leaves a kept-alive connection open inside the terminator.
        _ = try await client.send(HTTPClientRequest(url: fixture.url("/hello")), idempotent: true)
        let elapsed = await seconds { fixture.terminator.stop() }
        #expect(elapsed < 3, "took \(elapsed) s")
        let (fd, connected) = LoopbackSocket.connectNonBlocking(port: fixture.port, milliseconds: 500)
        close(fd)
        #expect(!connected)
        let error = await failure { () async throws(HTTPClientError) in
            try await client.send(HTTPClientRequest(url: fixture.url("/hello")), idempotent: true)
        }
        guard case .connectFailed = error else {
            Issue.record("expected connectFailed, got \(String(describing: error))")
            return
        }
        await fixture.server.stop()
    }

    @Test func servesOverIPv6WhenLoopbackHasIt() async throws {
        var router = Router()
        router.add(.get, "/x") { _ in HTTPResponse(contentType: "text/plain", body: "v6") }
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 1), router: router)
        let backendPort = try server.start()
        let authority = try CertificateAuthority()
        let terminator = TLSTerminator(context: try TLSServerContext(try authority.issue()), backendPort: backendPort, host: "::1")
        guard let port = try? terminator.start() else {
            // No IPv6 loopback on this machine.
            await server.stop()
            return
        }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(extraCAPEM: authority.certificatePEM, trustOnlyExtraCAs: true))
        let response = try await client.send(HTTPClientRequest(url: "https://[::1]:\(port)/x"), idempotent: true)
        #expect(response.text == "v6")
        terminator.stop()
        await server.stop()
    }
}
