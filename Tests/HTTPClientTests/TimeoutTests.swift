import Glibc
import HTTPClient
import Testing

/// Wall-clock bounds here are loose on purpose: when the whole package's tests run at once on
/// a small machine, resuming an awaiting test can lag by seconds. Each bound still sits far
/// below what a missing deadline would take.
@Suite(.timeLimit(.minutes(2))) struct TimeoutTests {
    @Test func connectingToAFullBacklogTimesOut() async throws {
        // A listener that never accepts, with backlog 0: once its queue is full, the kernel
        // drops new SYNs and a connect hangs, as to a host that does not answer.
        let (listener, port) = try LoopbackSocket.listen(backlog: 0)
        defer { close(listener) }
        var fillers: [Int32] = []
        defer { fillers.forEach { close($0) } }
        var full = false
        for _ in 0..<64 {
            let (fd, connected) = LoopbackSocket.connectNonBlocking(port: port, milliseconds: 200)
            fillers.append(fd)
            if !connected {
                full = true
                break
            }
        }
        try #require(full, "the backlog never filled")

        // A connect bounded only by the 60 s total would take 60 s.
        let client = try HTTPClient(configuration: HTTPClientConfiguration(connectTimeout: .milliseconds(300), totalTimeout: .seconds(60)))
        var error: HTTPClientError?
        let elapsed = await seconds {
            error = await failure { () async throws(HTTPClientError) in
                try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/"), idempotent: true)
            }
        }
        #expect(error == .timedOut)
        #expect(elapsed >= 0.25 && elapsed < 30, "took \(elapsed) s")
    }

    @Test func aServerThatNeverAnswersHitsTheTotalDeadline() async throws {
        let server = try ScriptedServer { _, _, _ in .stall }
        defer { server.stop() }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(totalTimeout: .milliseconds(500)))
        var error: HTTPClientError?
        let elapsed = await seconds {
            error = await failure { () async throws(HTTPClientError) in
                try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/"), idempotent: true)
            }
        }
        #expect(error == .timedOut)
        // Without the deadline this would wait for ever (until the time limit).
        #expect(elapsed >= 0.45 && elapsed < 30, "took \(elapsed) s")
        #expect(server.requests.count == 1)
    }

    @Test func aStalledTLSHandshakeHitsTheTotalDeadline() async throws {
        // Plain TCP that accepts and reads but never speaks TLS.
        let server = try ScriptedServer { _, _, _ in .stall }
        defer { server.stop() }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(totalTimeout: .milliseconds(400)))
        let error = await failure { () async throws(HTTPClientError) in
            try await client.send(HTTPClientRequest(url: "https://127.0.0.1:\(server.port)/"), idempotent: true)
        }
        #expect(error == .timedOut)
    }

    @Test func aRefusedConnectionFailsAtOnce() async throws {
        let (listener, port) = try LoopbackSocket.listen(backlog: 1)
        close(listener)
        let client = try HTTPClient()
        let error = await failure { () async throws(HTTPClientError) in
            try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/"), idempotent: true)
        }
        guard case .connectFailed(let reason) = error else {
            Issue.record("expected connectFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("127.0.0.1:\(port)"))
        #expect(reason.contains("refused"))
    }
}
