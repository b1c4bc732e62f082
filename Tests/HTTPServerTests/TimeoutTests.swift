import Foundation
import Testing
@testable import HTTPServer
import TestSupport

/// Slow and stalled clients are cut off, over real sockets and the loop's real clock. The
/// timeouts are shortened so the tests stay quick; ConnectionStateTests checks each rule (a
/// trickled head among them) to the nanosecond with the time held.
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
