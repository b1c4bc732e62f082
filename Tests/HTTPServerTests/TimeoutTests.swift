import Foundation
import Testing
@testable import HTTPServer

/// Slow and stalled clients are cut off. The timeouts are shortened so the tests stay quick;
/// the mechanism is the one that runs with SPEC §7's values.
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
        var status: Int?
        for index in 0..<30 {
            client.send("X-\(index): v\r\n")
            try await Task.sleep(for: .milliseconds(100))
            if index == 15 {
                status = try await client.readResponse().status
                break
            }
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
        // connection and its buffer for ever.
        try await Task.sleep(for: .milliseconds(1500))
        let received = await client.readAll()
        #expect(received.count > 0)
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
