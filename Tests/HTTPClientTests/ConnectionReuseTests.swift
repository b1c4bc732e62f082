import HTTPClient
import HTTPServer
import TLS
import Testing
import TestSupport

/// Keep-alive reuse and what happens when a reused connection dies under a request.
@Suite struct ConnectionReuseTests {
    enum Transport: CaseIterable { case plain, tls }

    /// The scripted server, reached directly or through a TLS terminator. Its client keeps idle
    /// connections for ten minutes: with the whole package's tests sharing two cooperative
    /// threads, a test can wait tens of seconds between two requests (seen: 58 s), which the
    /// default 30 s would turn into an expired connection.
    struct Front {
        static let idleTimeout: Duration = .seconds(600)

        let server: ScriptedServer
        let terminator: TLSTerminator?
        let client: HTTPClient
        let baseURL: String

        init(_ transport: Transport, script: @escaping ScriptedServer.Script) throws {
            server = try ScriptedServer(script: script)
            switch transport {
            case .plain:
                terminator = nil
                client = try HTTPClient(configuration: HTTPClientConfiguration(idleTimeout: Self.idleTimeout))
                baseURL = "http://127.0.0.1:\(server.port)"
            case .tls:
                let authority = try CertificateAuthority()
                let terminator = TLSTerminator(context: try TLSServerContext(try authority.issue()), backendPort: server.port)
                let port = try terminator.start()
                self.terminator = terminator
                client = try HTTPClient(configuration: HTTPClientConfiguration(
                    extraCAPEM: authority.certificatePEM, trustOnlyExtraCAs: true, idleTimeout: Self.idleTimeout))
                baseURL = "https://127.0.0.1:\(port)"
            }
        }

        /// Every connection closed at the server and, through TLS, at the terminator too: the
        /// client's socket has the end of file by then (on loopback it is queued as the
        /// closing side closes).
        var allClosed: Bool { server.closedConnections == server.acceptedConnections && (terminator?.openSockets ?? 0) == 0 }

        func stop() {
            terminator?.stop()
            server.stop()
        }
    }

    @Test(arguments: Transport.allCases)
    func sequentialRequestsShareOneConnection(transport: Transport) async throws {
        let front = try Front(transport) { _, index, _ in .respond(RawResponse.ok("r\(index)")) }
        defer { front.stop() }
        for index in 0..<3 {
            let response = try await front.client.send(HTTPClientRequest(url: front.baseURL + "/"), idempotent: true)
            #expect(response.text == "r\(index)")
        }
        #expect(front.server.acceptedConnections == 1)
        #expect(front.terminator.map { $0.acceptedConnections == 1 } ?? true)
    }

    @Test(arguments: Transport.allCases)
    func connectionCloseIsHonoured(transport: Transport) async throws {
        let front = try Front(transport) { _, _, _ in .respond(RawResponse.ok("x", extraHeaders: "Connection: close\r\n")) }
        defer { front.stop() }
        for _ in 0..<2 { _ = try await front.client.send(HTTPClientRequest(url: front.baseURL + "/"), idempotent: true) }
        #expect(front.server.acceptedConnections == 2)
    }

    /// The server reads the second request on the kept-alive connection and dies without a
    /// response: a code exchange must not be sent again (the code may already be spent).
    @Test(arguments: Transport.allCases)
    func aNonIdempotentRequestIsNotResentAfterTheConnectionDies(transport: Transport) async throws {
        let front = try Front(transport) { _, index, _ in index == 0 ? .respond(RawResponse.ok("first")) : .closeWithoutResponse }
        defer { front.stop() }
        let first = try await front.client.send(HTTPClientRequest(method: "POST", url: front.baseURL + "/token", body: [1]), idempotent: false)
        #expect(first.text == "first")
        let error = await failure { () async throws(HTTPClientError) in
            try await front.client.send(HTTPClientRequest(method: "POST", url: front.baseURL + "/token", body: [2]), idempotent: false)
        }
        #expect(error == .connectionClosed(mayHaveBeenSent: true))
        #expect(front.server.requests.map(\.body) == [[1], [2]])
        #expect(front.server.acceptedConnections == 1)
    }

    @Test(arguments: Transport.allCases)
    func anIdempotentRequestIsRetriedOnceOnAFreshConnection(transport: Transport) async throws {
        let front = try Front(transport) { connection, index, _ in
            index == 0 ? .respond(RawResponse.ok("c\(connection)")) : .closeWithoutResponse
        }
        defer { front.stop() }
        #expect(try await front.client.send(HTTPClientRequest(url: front.baseURL + "/keys"), idempotent: true).text == "c0")
        #expect(try await front.client.send(HTTPClientRequest(url: front.baseURL + "/keys"), idempotent: true).text == "c1")
        #expect(front.server.requests.map(\.connection) == [0, 0, 1])
    }

    @Test(arguments: Transport.allCases)
    func aFreshConnectionThatDiesIsNotRetried(transport: Transport) async throws {
        let front = try Front(transport) { _, _, _ in .closeWithoutResponse }
        defer { front.stop() }
        let error = await failure { () async throws(HTTPClientError) in
            try await front.client.send(HTTPClientRequest(url: front.baseURL + "/keys"), idempotent: true)
        }
        #expect(error == .connectionClosed(mayHaveBeenSent: true))
        #expect(front.server.requests.count == 1)
    }

    /// The server closes an idle kept-alive connection: the liveness check sees it before
    /// anything is written, so even a non-idempotent request goes out once, on a new connection.
    @Test(arguments: Transport.allCases)
    func anIdleConnectionTheServerClosedIsNotReused(transport: Transport) async throws {
        let front = try Front(transport) { connection, _, _ in .respondAndClose(RawResponse.ok("c\(connection)")) }
        defer { front.stop() }
        #expect(try await front.client.send(HTTPClientRequest(method: "POST", url: front.baseURL + "/", body: [1]), idempotent: false).text == "c0")
        #expect(try await eventually { front.allClosed })
        #expect(try await front.client.send(HTTPClientRequest(method: "POST", url: front.baseURL + "/", body: [2]), idempotent: false).text == "c1")
        #expect(front.server.requests.map(\.body) == [[1], [2]])
    }

    @Test func idleConnectionsExpire() async throws {
        let server = try ScriptedServer { _, _, _ in .respond(RawResponse.ok("x")) }
        defer { server.stop() }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(idleTimeout: .milliseconds(100)))
        _ = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/"), idempotent: true)
        // Time passing is what is tested: the pool measures idleness on the monotonic clock
        // when next touched, so 250 ms of sleep are at least 250 ms idle however loaded the
        // machine is, and no other thread has to do anything meanwhile.
        try await Task.sleep(for: .milliseconds(250))
        _ = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/"), idempotent: true)
        #expect(server.acceptedConnections == 2)
    }
}
