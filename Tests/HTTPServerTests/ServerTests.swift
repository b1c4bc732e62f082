import Foundation
import Synchronization
import Testing
@testable import HTTPServer
import TestSupport

/// The server over real sockets: framing, limits, errors, keep-alive, pipelining.
@Suite struct ServerTests {
    @Test func keepAliveServesManyRequestsOnOneConnection() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        for _ in 0..<5 {
            client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let response = try await client.readResponse()
            #expect(response.status == 200)
            #expect(response.header("Connection") == nil)
        }
        await server.stop()
    }

    @Test func pipelinedResponsesComeBackInRequestOrder() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        // The first request is slow: the quick ones behind it must still wait their turn.
        client.send(
            "GET /slow/200 HTTP/1.1\r\nHost: t\r\n\r\nGET /items/2 HTTP/1.1\r\nHost: t\r\n\r\n"
                + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nthreeGET /items/4 HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await client.readResponse().text == "slept 200")
        #expect(try await client.readResponse().text == "2")
        #expect(try await client.readResponse().text == "three")
        #expect(try await client.readResponse().text == "4")
        await server.stop()
    }

    @Test func chunkedBodiesWithExtensionsAndTrailersArrive() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        client.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        client.send("4;ext=1\r\nSign\r\n")
        client.send("8\r\n in with\r\n6;a;b=\"c\"\r\n Apple\r\n0\r\nX-Checksum: none\r\n\r\n")
        let response = try await client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "Sign in with Apple")
        #expect(try await server.stillServes())
        await server.stop()
    }

    @Test func expectContinueGetsAnInterimResponse() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        // The whole exchange on one thread: the body must follow the interim response promptly.
        let (interim, response) = try await offPool { () -> (RawClient.Response, RawClient.Response) in
            client.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            let interim = try client.readResponseBlocking()
            client.send("body")
            return (interim, try client.readResponseBlocking())
        }
        #expect(interim.status == 100)
        #expect(response.status == 200)
        #expect(response.text == "body")
        await server.stop()
    }

    @Test func expectContinueWithATooLargeBodyIsRefusedWithoutContinue() async throws {
        var limits = HTTPLimits()
        limits.maxBodyBytes = 100
        let server = try TestServer.start(limits: limits)
        let client = try server.client()
        client.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 101\r\n\r\n")
        let response = try await client.readResponse()
        #expect(response.status == 413)
        #expect(response.text.hasPrefix("payload_too_large: "))
        #expect(await client.isClosedByServer())
        await server.stop()
    }

    @Test func headAnswersWithoutABodyAndKeepsTheConnectionUsable() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        client.send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try await client.readResponse(head: true)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "5")
        client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await client.readResponse().text == "hello")
        await server.stop()
    }

    @Test func unknownRoutesAre404AndWrongMethodsAre405WithAllow() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        client.send("GET /missing HTTP/1.1\r\nHost: t\r\n\r\n")
        let missing = try await client.readResponse()
        #expect(missing.status == 404)
        #expect(missing.text == "not_found: no such resource\n")
        #expect(missing.header("X-Request-Id") != nil)
        client.send("PUT /hello HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
        let wrongMethod = try await client.readResponse()
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "GET, HEAD")
        #expect(wrongMethod.text.hasPrefix("method_not_allowed: "))
        // Neither closes the connection.
        client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await client.readResponse().status == 200)
        await server.stop()
    }

    static let refusals: [(name: String, request: String, status: Int, code: String)] = [
        ("bare LF", "GET /hello HTTP/1.1\nHost: t\n\n", 400, "bad_request"),
        ("line folding", "GET /hello HTTP/1.1\r\nHost: t\r\nX: a\r\n  b\r\n\r\n", 400, "bad_request"),
        ("missing Host", "GET /hello HTTP/1.1\r\n\r\n", 400, "bad_request"),
        ("CL and TE", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "bad_request"),
        ("TE gzip", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "bad_request"),
        ("garbage", "\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}\u{fc}\u{03}\u{03}\r\n\r\n", 400, "bad_request"),
        ("long URI", "GET /" + String(repeating: "u", count: 9000) + " HTTP/1.1\r\nHost: t\r\n\r\n", 414, "uri_too_long"),
        ("big headers", "GET /hello HTTP/1.1\r\nHost: t\r\nX-Big: " + String(repeating: "h", count: 17 * 1024) + "\r\n\r\n", 431, "headers_too_large"),
        ("101 fields", "GET /hello HTTP/1.1\r\nHost: t\r\n" + (0..<100).map { "X-\($0): v\r\n" }.joined() + "\r\n", 431, "headers_too_large"),
        ("big body", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n" + String(repeating: "b", count: 2000), 413, "payload_too_large"),
        ("big chunked body", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n7D0\r\n" + String(repeating: "c", count: 2000) + "\r\n0\r\n\r\n", 413, "payload_too_large"),
    ]

    @Test(arguments: refusals)
    func badInputGetsItsStatusThenTheConnectionClosesAndTheServerStillServes(
        _ refusal: (name: String, request: String, status: Int, code: String)
    ) async throws {
        var limits = HTTPLimits()
        limits.maxBodyBytes = 1000
        let server = try TestServer.start(limits: limits)
        let client = try server.client()
        client.send(refusal.request)
        let response = try await client.readResponse()
        #expect(response.status == refusal.status, "\(refusal.name)")
        #expect(response.text.hasPrefix("\(refusal.code): "), "\(refusal.name)")
        #expect(response.header("Connection") == "close")
        #expect(response.header("X-Request-Id") != nil)
        #expect(await client.isClosedByServer(), "\(refusal.name)")
        #expect(try await server.stillServes())
        await server.stop()
    }

    @Test func requestIDsAreEchoedWhenWellFormedAndReplacedOtherwise() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        client.send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Request-Id: trace-42.a_b\r\n\r\n")
        #expect(try await client.readResponse().header("X-Request-Id") == "trace-42.a_b")
        client.send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Request-Id: <script>\r\n\r\n")
        let replaced = try await client.readResponse().header("X-Request-Id")
        #expect(replaced != nil && replaced != "<script>" && RequestID.isValid(replaced!))
        await server.stop()
    }

    @Test func gzipAppliesToLargeCompressibleBodiesWhenAccepted() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        client.send("GET /big HTTP/1.1\r\nHost: t\r\nAccept-Encoding: br, gzip\r\n\r\n")
        let compressed = try await client.readResponse()
        #expect(compressed.header("Content-Encoding") == "gzip")
        #expect(compressed.header("Vary") == "Accept-Encoding")
        let inflated = Gzip.decompress(compressed.body, limit: 1 << 20).map { String(decoding: $0, as: UTF8.self) }
        #expect(inflated?.hasPrefix("[\"abcdefgh\",") == true)
        client.send("GET /big HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip;q=0\r\n\r\n")
        let refused = try await client.readResponse()
        #expect(refused.header("Content-Encoding") == nil)
        #expect(refused.header("Vary") == "Accept-Encoding")
        await server.stop()
    }

    @Test func http10ClosesUnlessKeepAliveIsAsked() async throws {
        let server = try TestServer.start()
        let plain = try server.client()
        plain.send("GET /hello HTTP/1.0\r\n\r\n")
        #expect(try await plain.readResponse().header("Connection") == "close")
        #expect(await plain.isClosedByServer())
        let keepAlive = try server.client()
        keepAlive.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try await keepAlive.readResponse().header("Connection") == "keep-alive")
        keepAlive.send("GET /hello HTTP/1.0\r\n\r\n")
        #expect(try await keepAlive.readResponse().status == 200)
        await server.stop()
    }

    @Test func aHalfClosedClientStillGetsItsResponse() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        client.send("GET /slow/50 HTTP/1.1\r\nHost: t\r\n\r\n")
        client.shutdownWrite()
        let response = try await client.readResponse()
        #expect(response.text == "slept 50")
        #expect(await client.isClosedByServer())
        await server.stop()
    }

    @Test func aHalfClosedClientsPipelinedRequestsAreAllAnsweredThenTheConnectionCloses() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        // Three answers from tasks, one slow: then the client is done sending.
        client.send("GET /slow/20 HTTP/1.1\r\nHost: t\r\n\r\nGET /hello HTTP/1.1\r\nHost: t\r\n\r\nGET /items/7 HTTP/1.1\r\nHost: t\r\n\r\n")
        client.shutdownWrite()
        var answers: [RawClient.Response] = []
        for _ in 0..<3 { answers.append(try await client.readResponse()) }
        #expect(answers.map(\.text) == ["slept 20", "hello", "7"])
        #expect(answers.map { $0.header("Connection") } == [nil, nil, "close"])
        #expect(await client.isClosedByServer())
        await server.stop()
    }

    @Test func aHalfClosedClientsTruncatedRequestIsDroppedAfterTheWholeOnesAnswer() async throws {
        let server = try TestServer.start()
        let client = try server.client()
        client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\nGET /hel")
        client.shutdownWrite()
        #expect(try await client.readResponse().text == "hello")
        // Closed at once, not at a header timeout (the test's timeouts are minutes).
        #expect(await client.isClosedByServer())
        await server.stop()
    }

    @Test func aHandlerThatWaitsDoesNotHoldUpOtherConnections() async throws {
        // One I/O loop only, and a handler that waits until the test lets it go: the other
        // requests can only be answered if waiting does not block the loop.
        let server = try TestServer.start(threads: 1)
        let gate = Gate.uniqueName()
        let waiting = try server.client()
        waiting.send("GET /gate/\(gate) HTTP/1.1\r\nHost: t\r\n\r\n")
        for _ in 0..<20 { #expect(try await server.stillServes()) }
        Gate.shared.open(gate)
        #expect(try await waiting.readResponse().text == "opened \(gate)")
        await server.stop()
    }

    @Test func servesOverIPv6() async throws {
        let server = try TestServer.start(host: "::1")
        let client = try RawClient(port: server.port, host: "::1")
        client.send("GET /hello HTTP/1.1\r\nHost: [::1]\r\n\r\n")
        #expect(try await client.readResponse().text == "hello")
        await server.stop()
    }

    @Test func manyConcurrentConnectionsAreAllServed() async throws {
        let server = try TestServer.start()
        let failures = Atomic<Int>(0)
        let port = server.port
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            do {
                let client = try RawClient(port: port)
                for request in 0..<5 {
                    client.send("GET /items/\(index)-\(request) HTTP/1.1\r\nHost: t\r\n\r\n")
                    if try client.readResponseBlocking().text != "\(index)-\(request)" { failures.add(1, ordering: .relaxed) }
                }
            } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        await server.stop()
    }

    /// The access log keeps a connection's lines in order because they all come from one
    /// thread: its I/O thread, also after a handler suspended or a large body was handled on
    /// the background threads.
    @Test func everyResponseOfAConnectionIsObservedOnItsIOThreadInOrder() async throws {
        let observer = ThreadRecordingObserver()
        let server = try TestServer.start(threads: 2, observer: observer)
        let body = String(repeating: "b", count: 40 * 1024)  // past offloadBodyBytes
        let requests = 8
        try await withThrowingTaskGroup(of: Void.self) { group in
            for connection in 0..<4 {
                let client = try server.client()
                group.addTask {
                    var text = ""
                    for index in 0..<requests {
                        let id = "X-Request-Id: c\(connection)-r\(index)\r\n"
                        switch index % 4 {
                        case 0: text += "GET /hello HTTP/1.1\r\nHost: t\r\n\(id)\r\n"
                        case 1: text += "GET /slow/2 HTTP/1.1\r\nHost: t\r\n\(id)\r\n"
                        case 2: text += "POST /echo HTTP/1.1\r\nHost: t\r\n\(id)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
                        default: text += "GET /items/\(index) HTTP/1.1\r\nHost: t\r\n\(id)\r\n"
                        }
                    }
                    client.send(text)
                    for _ in 0..<requests {
                        let response = try await client.readResponse()
                        #expect(response.status == 200)
                    }
                }
            }
            try await group.waitForAll()
        }
        let records = observer.records
        #expect(records.count == 4 * requests)
        for connection in 0..<4 {
            let mine = records.filter { $0.requestID.hasPrefix("c\(connection)-") }
            #expect(mine.map(\.requestID) == (0..<requests).map { "c\(connection)-r\($0)" })
            #expect(Set(mine.map(\.thread)).count == 1)
        }
        await server.stop()
    }

    @Test func theObserverSeesEachRequestWithoutItsQuery() async throws {
        let observer = RecordingObserver()
        let server = try TestServer.start(observer: observer)
        let client = try server.client()
        client.send("GET /items/7?token=secret HTTP/1.1\r\nHost: t\r\nX-Request-Id: obs-1\r\n\r\n")
        _ = try await client.readResponse()
        client.send("GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try await client.readResponse()
        let records = observer.records
        #expect(records.count == 2)
        #expect(records.first?.route == "/items/{id}")
        #expect(records.first?.path == "/items/7")
        #expect(records.first?.requestID == "obs-1")
        #expect(records.first?.status == 200)
        #expect(records.first?.remoteAddress == "127.0.0.1")
        #expect(records.last?.route == nil)
        #expect(records.last?.status == 404)
        #expect(!records.contains { $0.path.contains("secret") })
        await server.stop()
    }
}

final class RecordingObserver: HTTPServerObserver {
    private let storage = Mutex<[AccessRecord]>([])
    var records: [AccessRecord] { storage.withLock { $0 } }
    func requestCompleted(_ record: AccessRecord) { storage.withLock { $0.append(record) } }
}
