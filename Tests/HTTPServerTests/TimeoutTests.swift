import Foundation
import Testing
@testable import HTTPServer
import TestSupport

/// Slow and stalled clients are cut off. The timeouts are shortened so the tests stay quick;
/// the mechanism is the one that runs with docs/reference/http-api.md's values.
@Suite struct TimeoutTests {
    private static func shortTimeouts() -> HTTPTimeouts {
        var timeouts = HTTPTimeouts()
        timeouts.header = .milliseconds(800)
        timeouts.bodyProgress = .milliseconds(800)
        timeouts.idle = .milliseconds(800)
        timeouts.linger = .milliseconds(300)
        return timeouts
    }

    @Test func aConnectionThatSendsNothingIsClosedWithoutAResponse() async throws {
        let server = try TestServer.start(timeouts: Self.shortTimeouts())
        let client = try server.client()
        #expect(await client.readAll().isEmpty)
        #expect(try await server.stillServes())
        await server.stop()
    }

    @Test func aHeadThatNeverEndsGets408() async throws {
        let server = try TestServer.start(timeouts: Self.shortTimeouts())
        let client = try server.client()
        client.send("GET /hello HTTP/1.1\r\nHost: t\r\n")
        let response = try await client.readResponse()
        #expect(response.status == 408)
        #expect(response.text.hasPrefix("request_timeout: "))
        #expect(await client.isClosedByServer())
        #expect(try await server.stillServes())
        await server.stop()
    }

    @Test func aTrickledHeadIsCutOffEvenWhileBytesKeepComing() async throws {
        // Slowloris: progress must not extend the header deadline. The linger outlasts the
        // trickle, so the client's late bytes never turn the close into a reset.
        var timeouts = Self.shortTimeouts()
        timeouts.linger = .seconds(5)
        let server = try TestServer.start(timeouts: timeouts)
        let client = try server.client()
        client.send("GET /hello HTTP/1.1\r\n")
        // A header line every 100 ms (the pause is the attack; a loaded machine only makes
        // it longer) until the server answers; the 60 s are a bound on failure.
        let status = try await offPool { () -> Int? in
            let deadline = ContinuousClock.now + .seconds(60)
            var index = 0
            while ContinuousClock.now < deadline {
                client.send("X-\(index): v\r\n")
                index += 1
                Thread.sleep(forTimeInterval: 0.1)
                var readable = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
                if poll(&readable, 1, 0) > 0 { return try client.readResponseBlocking().status }
            }
            return nil
        }
        #expect(status == 408)
        await server.stop()
    }

    @Test func aStalledBodyGets408() async throws {
        let server = try TestServer.start(timeouts: Self.shortTimeouts())
        let client = try server.client()
        client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        let response = try await client.readResponse()
        #expect(response.status == 408)
        #expect(await client.isClosedByServer())
        await server.stop()
    }

    @Test func aClientThatStopsReadingIsCutOff() async throws {
        var timeouts = Self.shortTimeouts()
        timeouts.writeProgress = .milliseconds(500)
        let server = try TestServer.start(timeouts: timeouts)
        let client = try server.client()
        client.send("GET /huge HTTP/1.1\r\nHost: t\r\n\r\n")
        // 32 MiB cannot fit in the socket buffers; the server must give up rather than hold the
        // connection and its buffer for ever. The first bytes prove the connection was taken;
        // reading nothing more, the client waits for the server to close its end.
        let first = try await offPool { try client.readSomeBlocking() }
        #expect(try await eventually { server.server.openConnectionCount == 0 })
        let received = first + (await client.readAll())
        #expect(first.count > 0)
        #expect(received.count < 32 << 20)
        #expect(try await server.stillServes())
        await server.stop()
    }

    @Test func anIdleKeepAliveConnectionIsClosedQuietly() async throws {
        let server = try TestServer.start(timeouts: Self.shortTimeouts())
        let client = try server.client()
        client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await client.readResponse().status == 200)
        #expect(await client.readAll().isEmpty)
        await server.stop()
    }
}
