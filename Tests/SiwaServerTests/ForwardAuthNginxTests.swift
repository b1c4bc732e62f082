import AppleSimulator
import Foundation
import HTTPServer
import JSON
import Synchronization
import Testing
import TestSupport

/// Debian's nginx in front of the real binary with the shipped configuration
/// (`Config/nginx-forward-auth.conf`, shown in the README): a protected location lets a
/// signed-in request through with the user in `X-Siwa-*` headers, refuses the others, and never
/// lets a client's own `X-Siwa-*` headers reach the API (docs/guides/connecting-your-backend.md).
@Suite(
    .enabled(if: Nginx.testsEnabled, "nginx is not installed (Scripts/install-packages installs it)"),
    .timeLimit(.minutes(2)))
struct ForwardAuthNginxTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var shippedConfiguration: String {
        get throws { try String(contentsOf: root.appendingPathComponent("Config/nginx-forward-auth.conf"), encoding: .utf8) }
    }

    /// The team's API: answers with the `X-Siwa-*` headers it was given, and counts requests.
    final class TeamAPI: Sendable {
        let server: HTTPServer
        let port: UInt16
        let counter = Counter()
        var requests: Int { counter.value.withLock { $0 } }

        final class Counter: Sendable {
            let value = Mutex(0)
        }

        init() throws {
            var router = Router()
            let counter = self.counter
            router.add(.get, "/v1/whoami") { request in
                counter.value.withLock { $0 += 1 }
                let seen = ["X-Siwa-User-Id", "X-Siwa-Session-Id", "X-Siwa-Apple-Sub", "X-Siwa-External-Id"].map { name in
                    "\(name)=\(request.headers.values(name).joined(separator: ","))"
                }
                return HTTPResponse(contentType: "text/plain", body: seen.joined(separator: "\n"))
            }
            server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 1), router: router)
            port = try server.start()
        }
    }

    static func get(_ port: UInt16, _ path: String, headers: [String] = []) async throws -> (status: Int, body: String) {
        let extra = headers.map { $0 + "\r\n" }.joined()
        let reply = try await HTTPRequest.send(port: port, "GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\(extra)\r\n")
        let status = Int(reply.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, reply.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test func aProtectedLocationLetsASignedInRequestThroughAndRefusesOthers() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let siwa = try ServerProcess(["serve"], environment: ServerProcess.environment(simulator: simulator, ["SIWA_RATE_LIMIT": "0"]))
        let siwaPort = try #require(await siwa.waitForPort())
        try await ServerProcess.waitUntilReady(port: siwaPort)
        let api = try TeamAPI()
        let nginx = try await Nginx(http: """
            upstream siwa { server 127.0.0.1:\(siwaPort); }
            upstream team_api { server 127.0.0.1:\(api.port); }
            \(try Self.shippedConfiguration)
            """)

        // Signing in through nginx reaches siwa-server itself.
        let signedIn = try await ServerProcess.signIn(port: nginx.port, simulator: simulator, sub: "000905.nginx.0905", nonce: "n-nginx")
        #expect(signedIn.status == 200)
        let token = try #require(signedIn.json?["session"]?.object?["token"]?.string)
        let userID = try #require(signedIn.json?["user"]?.object?["id"]?.string)

        // A client's own X-Siwa-* headers are replaced or dropped, never passed on.
        let forged = ["X-Siwa-User-Id: usr_forged", "X-Siwa-External-Id: forged", "X-Siwa-Apple-Sub: forged"]
        let through = try await Self.get(nginx.port, "/v1/whoami", headers: ["Authorization: Bearer \(token)"] + forged)
        #expect(through.status == 200, "\(nginx.errorLog)")
        let seen = Set(through.body.split(separator: "\n").map(String.init))
        #expect(seen.contains("X-Siwa-User-Id=\(userID)"))
        #expect(seen.contains("X-Siwa-Apple-Sub=000905.nginx.0905"))
        #expect(seen.contains("X-Siwa-External-Id="), "no external id is set, and the forged one is gone")
        #expect(seen.contains { $0.hasPrefix("X-Siwa-Session-Id=ses_") })

        // The session cookie works the same way.
        let viaCookie = try await Self.get(nginx.port, "/v1/whoami", headers: ["Cookie: siwa_session=\(token)"])
        #expect(viaCookie.status == 200 && viaCookie.body.contains("X-Siwa-User-Id=\(userID)"))
        let reached = api.requests

        // No session, a wrong one, or a forged header alone: 401, and the API never sees them.
        #expect(try await Self.get(nginx.port, "/v1/whoami").status == 401)
        #expect(try await Self.get(nginx.port, "/v1/whoami", headers: ["Authorization: Bearer not-a-session"]).status == 401)
        #expect(try await Self.get(nginx.port, "/v1/whoami", headers: forged).status == 401)

        // Signing out through nginx ends access at once.
        let logout = try await HTTPRequest.send(
            port: nginx.port, "POST /api/logout HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(token)\r\nContent-Length: 0\r\n\r\n")
        #expect(logout.hasPrefix("HTTP/1.1 204"))
        #expect(try await Self.get(nginx.port, "/v1/whoami", headers: ["Authorization: Bearer \(token)"]).status == 401)
        #expect(api.requests == reached)

        await nginx.stop()
        await api.server.stop()
        siwa.signal(SIGTERM)
        _ = await siwa.wait(seconds: 15)
        await simulator.stop()
    }

    @Test func theGuideShowsTheTestedConfiguration() throws {
        let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/guides/connecting-your-backend.md"), encoding: .utf8)
        let configuration = try Self.shippedConfiguration
        let serverBlock = try #require(configuration.range(of: "server {")).lowerBound
        #expect(
            guide.contains(String(configuration[serverBlock...])),
            "the guide's nginx example is Config/nginx-forward-auth.conf's server block")
    }
}
