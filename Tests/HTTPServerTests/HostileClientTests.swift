import Foundation
import Synchronization
import Testing
@testable import HTTPServer
import TestSupport

/// Clients that try to hold the server's threads, descriptors or memory (issue 9, SPEC §12).
/// Limits are shrunk so each attack fits a quick test; the mechanism is the one that runs with
/// the defaults.
@Suite struct HostileClientTests {
    /// A handler that blocks its thread until `/release` is requested. If large bodies were
    /// handled on the I/O thread, with one loop `/release` could never be read: the test
    /// would end in a timeout instead of two answers.
    @Test func aLargeBodyIsHandledOffTheIOThread() async throws {
        let released = Released()
        let server = try TestServer.start(threads: 1) { router in
            router.add(.post, "/spin") { request in
                released.enter()
                let freed = released.waitBlocking(seconds: 60)
                return HTTPResponse(contentType: "text/plain", body: freed ? "freed \(request.body.count)" : "never freed")
            }
            router.add(.get, "/release") { _ in
                released.signal()
                return HTTPResponse(contentType: "text/plain", body: "released")
            }
        }
        let big = try server.client(timeoutSeconds: 90)
        let body = [UInt8](repeating: UInt8(ascii: "a"), count: 64 * 1024)
        big.send("POST /spin HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.count)\r\n\r\n")
        big.send(body)
        // Only once the handler holds its thread does /release prove anything: sent earlier,
        // it would be answered first and the handler would find itself freed already.
        #expect(try await eventually { released.isEntered })
        let other = try server.client()
        other.send("GET /release HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await other.readResponse().text == "released")
        #expect(try await big.readResponse().text == "freed 65536")
        await server.stop()
    }

    @Test func connectionsPastThePerAddressCapAreClosedAtOnce() async throws {
        var limits = HTTPLimits()
        limits.maxConnectionsPerAddress = 3
        let server = try TestServer.start(limits: limits)
        var held: [RawClient] = []
        for _ in 0..<3 {
            let client = try server.client()
            client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try await client.readResponse().status == 200)
            held.append(client)
        }
        let refused = try server.client()
        refused.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await refused.readAll().isEmpty)
        // One of the three goes: once the server has closed its end, a new connection is
        // welcome again.
        held.removeFirst()
        #expect(try await eventually { server.server.openConnectionCount == 2 })
        #expect(try await server.stillServes())
        await server.stop()
    }

    @Test func connectionsPastMaxConnectionsAreClosedAtOnce() async throws {
        var limits = HTTPLimits()
        limits.maxConnections = 2
        let server = try TestServer.start(limits: limits)
        let first = try server.client(), second = try server.client()
        for client in [first, second] { client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n") }
        for client in [first, second] { #expect(try await client.readResponse().status == 200) }
        let refused = try server.client()
        #expect(await refused.readAll().isEmpty)
        await server.stop()
    }

    @Test func aTrickledBodyIsCutOffByTheMinimumRate() async throws {
        var timeouts = HTTPTimeouts.patient
        timeouts.bodyGrace = .milliseconds(500)
        timeouts.linger = .seconds(3)
        let server = try TestServer.start(timeouts: timeouts)
        let client = try server.client()
        client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n")
        // A byte every 100 ms is progress (the progress timeout never fires) but far below
        // 1 KiB/s: the rate rule must end it. The pause is the attack itself; on a loaded
        // machine it only grows, which keeps the rate lower still. It goes on until the server
        // answers (the 60 s are a bound on failure).
        let status = try await offPool { () -> Int? in
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                client.send("x")
                Thread.sleep(forTimeInterval: 0.1)
                var readable = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
                if poll(&readable, 1, 0) > 0 { return try client.readResponseBlocking().status }
            }
            return nil
        }
        #expect(status == 408)
        #expect(try await server.stillServes())
        await server.stop()
    }

    @Test func bodiesPastTheSharedBudgetGet503AndTheBudgetComesBack() async throws {
        var limits = HTTPLimits()
        limits.bufferedBodyBudget = 128 * 1024
        limits.freeBufferBytes = 16 * 1024
        let server = try TestServer.start(limits: limits)
        // The first holds the whole budget with half a body...
        let holder = try server.client()
        holder.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 300000\r\n\r\n")
        holder.send([UInt8](repeating: 0x61, count: 100 * 1024))
        // ...once the server has read it (waited for, not slept on: a loaded machine can take a
        // while)...
        #expect(try await eventually { (server.server.bodyBudgetLeft ?? 0) <= limits.bufferedBodyBudget - 64 * 1024 })
        // ...so the next large body is refused, and memory stays bounded.
        let refused = try server.client()
        refused.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 60000\r\n\r\n")
        refused.send([UInt8](repeating: 0x62, count: 60000))
        let response = try await refused.readResponse()
        #expect(response.status == 503)
        #expect(response.text.hasPrefix("busy: "))
        // Small requests never touch the budget.
        #expect(try await server.stillServes())
        // When the holder goes, its share is free again: once the server has seen it close, the
        // same body is taken.
        _ = consume holder
        _ = consume refused
        #expect(try await eventually { server.server.bodyBudgetLeft == limits.bufferedBodyBudget })
        let client = try server.client()
        client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 60000\r\n\r\n")
        client.send([UInt8](repeating: 0x63, count: 60000))
        let echoed = try await client.readResponse()
        #expect(echoed.status == 200)
        #expect(echoed.body.count == 60000)
        await server.stop()
    }

    @Test func forwardedForOnSeveralLinesIsJoinedInOrder() async throws {
        let observer = RecordingObserver()
        let server = try TestServer.start(observer: observer)
        let client = try server.client()
        client.send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: 203.0.113.9\r\nX-Forwarded-For: 198.51.100.7, 10.0.0.2\r\n\r\n")
        _ = try await client.readResponse()
        #expect(observer.records.first?.forwardedFor == "203.0.113.9, 198.51.100.7, 10.0.0.2")
        await server.stop()
    }
}

/// A one-shot flag a blocking handler waits on, and whether the handler has begun waiting.
private final class Released: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = Atomic<Bool>(false)
    func enter() { entered.store(true, ordering: .releasing) }
    var isEntered: Bool { entered.load(ordering: .acquiring) }
    func signal() { semaphore.signal() }
    func waitBlocking(seconds: Int) -> Bool { semaphore.wait(timeout: .now() + .seconds(seconds)) == .success }
}
