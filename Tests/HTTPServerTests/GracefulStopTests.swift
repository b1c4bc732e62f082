import Foundation
import Testing
@testable import HTTPServer
import TestSupport

@Suite struct GracefulStopTests {
    @Test func stopFinishesTheRequestInFlightThenRefusesNewConnections() async throws {
        // The drain's bound is the next test's: here it must not end the request in flight
        // while a starved machine takes its time (10 s passed when every test ran at once).
        var timeouts = HTTPTimeouts.patient
        timeouts.drain = .seconds(120)
        let server = try TestServer.start(timeouts: timeouts)
        let gate = Gate.uniqueName()
        let busy = try server.client()
        busy.send("GET /gate/\(gate) HTTP/1.1\r\nHost: t\r\n\r\n")
        // Running before the stop, or the connection would be idle and simply closed.
        #expect(try await eventually { Gate.shared.waiting(gate) == 1 })
        let idle = try server.client()
        idle.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try await idle.readResponse()

        let stopping = Task { await server.stop() }
        // The listener closes once every loop has begun stopping.
        let port = server.port
        let refused = try await offPool { () -> Bool in
            for _ in 0..<6000 {  // a bound on failure (60 s), not a speed limit
                if (try? RawClient(port: port)) == nil { return true }
                usleep(10_000)  // polls the listener, blocking, on a thread of its own
            }
            return false
        }
        #expect(refused)
        #expect(await idle.isClosedByServer())
        Gate.shared.open(gate)
        let response = try await busy.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "opened \(gate)")
        #expect(response.header("Connection") == "close")
        await stopping.value
    }

    @Test func stopIsBoundedByTheDrainTimeout() async throws {
        var timeouts = HTTPTimeouts.patient
        timeouts.drain = .milliseconds(300)
        let server = try TestServer.start(timeouts: timeouts)
        let busy = try server.client()
        // This handler never finishes: only the drain bound can end the stop. It must be
        // running before the stop, or the connection would be idle and simply closed.
        let gate = Gate.uniqueName()
        busy.send("GET /gate/\(gate) HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await eventually { Gate.shared.waiting(gate) == 1 })
        await server.stop()
        #expect(await busy.readAll().isEmpty)
    }
}
