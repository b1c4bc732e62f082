import Synchronization
import Testing
import TestSupport
@testable import HTTPServer

/// A route's immediate handler answers on the I/O loop's thread, without a task, when it can;
/// when it says nil, the route's task answers; what it throws becomes the error renderer's answer.
@Suite struct ImmediateHandlerTests {
    /// Whether the immediate handler ran inside a task, for each call.
    final class Calls: Sendable {
        let inTask = Mutex<[Bool]>([])
        func record() { inTask.withLock { $0.append(withUnsafeCurrentTask { $0 != nil }) } }
        var all: [Bool] { inTask.withLock { $0 } }
    }

    static func routes(_ calls: Calls) -> (inout Router) -> Void {
        { router in
            router.add(.get, "/now", { _ in HTTPResponse(contentType: "text/plain", body: "by the task") }, immediate: { _ in
                calls.record()
                return HTTPResponse(contentType: "text/plain", body: "at once")
            })
            // Answers at once only for ?fast; otherwise the task does.
            router.add(.get, "/maybe", { _ in HTTPResponse(contentType: "text/plain", body: "by the task") }, immediate: { request in
                calls.record()
                return request.query == "fast" ? HTTPResponse(contentType: "text/plain", body: "at once") : nil
            })
            router.add(.get, "/refuses", { _ in HTTPResponse(status: 500) }, immediate: { _ in
                throw HTTPRefusal(status: 403, code: "forbidden", reason: "not you")
            })
        }
    }

    @Test func theResponderUsesTheImmediateHandlerAndFallsBackWhenItSaysNil() async throws {
        let calls = Calls()
        var router = Router()
        Self.routes(calls)(&router)
        let responder = RoutingResponder(router: router)

        let now = try #require(responder.respondImmediately(to: HTTPRequest(.get, "/now")))
        #expect(String(decoding: now.body, as: UTF8.self) == "at once")
        #expect(now.route == "/now")
        #expect(responder.respondImmediately(to: HTTPRequest(.get, "/maybe?slow")) == nil)
        #expect(String(decoding: await responder.respond(to: HTTPRequest(.get, "/maybe?slow")).body, as: UTF8.self) == "by the task")
        let refused = try #require(responder.respondImmediately(to: HTTPRequest(.get, "/refuses")))
        #expect(refused.status == 403 && refused.route == "/refuses")
        // Routes without one, and paths without a route, are the task's (404 and 405 included).
        for path in ["/hello", "/nowhere"] { #expect(responder.respondImmediately(to: HTTPRequest(.get, path)) == nil) }
        #expect(responder.respondImmediately(to: HTTPRequest(.post, "/now")) == nil)
    }

    @Test func overASocketTheAnswerIsMadeWithoutATaskAndPipelinedAnswersKeepTheirOrder() async throws {
        let calls = Calls()
        let server = try TestServer.start(configure: Self.routes(calls))
        let gate = Gate.uniqueName()
        let client = try server.client()
        // At once, by a task held at a gate, at once, by the task after a nil, at once.
        client.send(
            "GET /now HTTP/1.1\r\nHost: t\r\n\r\nGET /gate/\(gate) HTTP/1.1\r\nHost: t\r\n\r\nGET /maybe?fast HTTP/1.1\r\nHost: t\r\n\r\n"
                + "GET /maybe HTTP/1.1\r\nHost: t\r\n\r\nGET /now HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(String(decoding: try await client.readResponse().body, as: UTF8.self) == "at once")
        #expect(try await eventually { Gate.shared.waiting(gate) == 1 })
        // Nothing after the held request is answered, nor even offered, before it.
        #expect(calls.all.count == 1)
        Gate.shared.open(gate)
        var bodies: [String] = []
        for _ in 0..<4 { bodies.append(String(decoding: try await client.readResponse().body, as: UTF8.self)) }
        #expect(bodies == ["opened \(gate)", "at once", "by the task", "at once"])
        // The first was made straight from the loop's read, outside any task; the later ones
        // as the held request's task completed on the loop, within it, making none of their own.
        #expect(calls.all.count == 4)
        #expect(calls.all.first == false, "the immediate answer was made outside any task")
        await server.stop()
    }

    /// A client pipelining many immediate requests in one read gets a loop's turn's worth
    /// answered at once; the next goes to a task, so the loop's other connections get their
    /// turn; then the rest, in order.
    @Test func aLongPipelineOfImmediateRequestsYieldsTheLoopAfterATurnsWorth() async throws {
        let calls = Calls()
        let server = try TestServer.start(configure: Self.routes(calls))
        let client = try server.client()
        let turn = Connection.maxImmediateAnswersInARow
        // One send of a few KiB arrives in one read on loopback.
        client.send(String(repeating: "GET /now HTTP/1.1\r\nHost: t\r\n\r\n", count: 2 * turn + 1))
        var bodies: [String] = []
        for _ in 0..<(2 * turn + 1) { bodies.append(String(decoding: try await client.readResponse().body, as: UTF8.self)) }
        let expected = Array(repeating: "at once", count: turn) + ["by the task"] + Array(repeating: "at once", count: turn)
        #expect(bodies == expected)
        await server.stop()
    }
}
