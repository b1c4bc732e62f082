import Foundation
@testable import HTTPServer
import TestSupport

/// Starts a real `HTTPServer` on a free loopback port with test routes.
struct TestServer {
    let server: HTTPServer
    let port: UInt16

    static func start(
        threads: Int = 2, host: String = "127.0.0.1", limits: HTTPLimits = HTTPLimits(),
        timeouts: HTTPTimeouts = .patient, observer: (any HTTPServerObserver)? = nil,
        configure: (inout Router) -> Void = { _ in }
    ) throws -> TestServer {
        var router = Router()
        router.add(.get, "/hello") { _ in HTTPResponse(contentType: "text/plain", body: "hello") }
        router.add(.post, "/echo") { request in
            HTTPResponse(headers: ["Content-Type": "application/octet-stream"], body: request.body)
        }
        router.add(.get, "/big") { _ in
            HTTPResponse(contentType: "application/json", body: "[" + String(repeating: "\"abcdefgh\",", count: 500) + "0]")
        }
        // A handler that takes its time: the tests that use it hold for any length of it.
        router.add(.get, "/slow/{ms}") { request in
            let ms = Int(request.pathParameters["ms"] ?? "0") ?? 0
            try? await Task.sleep(for: .milliseconds(ms))
            return HTTPResponse(contentType: "text/plain", body: "slept \(ms)")
        }
        router.add(.get, "/gate/{name}") { request in
            let name = request.pathParameters["name"] ?? ""
            await Gate.shared.wait(name)
            return HTTPResponse(contentType: "text/plain", body: "opened \(name)")
        }
        router.add(.get, "/items/{id}") { request in
            HTTPResponse(contentType: "text/plain", body: request.pathParameters["id"] ?? "")
        }
        router.add(.delete, "/items/{id}") { _ in HTTPResponse(status: 204) }
        router.add(.get, "/huge") { _ in
            HTTPResponse(headers: ["Content-Type": "application/octet-stream"], body: [UInt8](repeating: 0x61, count: 32 << 20))
        }
        configure(&router)
        var configuration = HTTPServerConfiguration(host: host, port: 0, threads: threads)
        configuration.limits = limits
        configuration.timeouts = timeouts
        let server = HTTPServer(configuration: configuration, router: router, observer: observer)
        let port = try server.start()
        return TestServer(server: server, port: port)
    }

    /// A read waits up to `timeoutSeconds` for a byte: a bound on failure, generous because on a
    /// loaded machine an answer can take seconds (a server that closes is seen at once).
    func client(timeoutSeconds: Int = 60) throws -> RawClient {
        try RawClient(port: port, timeoutSeconds: timeoutSeconds)
    }

    /// One fresh request proving the server still serves.
    func stillServes() async throws -> Bool {
        let client = try client()
        client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try await client.readResponse()
        return response.status == 200 && response.text == "hello"
    }

    func stop() async { await server.stop() }
}

extension HTTPTimeouts {
    /// For tests that are not about timeouts: while hundreds of tests start together, a test's
    /// next step can come seconds late, and the server must not cut its client off meanwhile.
    static var patient: HTTPTimeouts {
        var timeouts = HTTPTimeouts()
        timeouts.header = .seconds(120)
        timeouts.bodyProgress = .seconds(120)
        timeouts.bodyGrace = .seconds(120)
        timeouts.idle = .seconds(120)
        timeouts.writeProgress = .seconds(120)
        return timeouts
    }
}

/// Runs blocking socket work on its own thread, so it never occupies the small cooperative
/// pool that the code under test may need at the same moment.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
