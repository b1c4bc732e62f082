import TestSupport
import AppleSimulator
import Foundation
import HTTPServer
import Logging
import Testing
@testable import SiwaApp

/// The assembled application: its probes in process on both engines (with a socket sample),
/// what only a connection does (access lines, client addresses, body limits) over real sockets.
@Suite struct ApplicationTests {
    /// The socket sample.
    @Test(arguments: DatabaseEngine.available, Transport.allCases)
    func healthzAnswersOK(_ engine: DatabaseEngine, _ transport: Transport) async throws {
        try await withApp(engine: engine, transport: transport) { harness in
            let response = try await harness.get("/healthz")
            #expect(response.status == 200)
            #expect(response.body == #"{"status":"ok"}"#)
            #expect(response.headers["content-type"] == "application/json")
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func readyzIsReadyOnceTheDatabaseAnswersAndKeysAreLoaded(_ engine: DatabaseEngine) async throws {
        try await withApp(engine: engine) { harness in
            let response = try await harness.waitUntilReady()
            #expect(response.status == 200)
            #expect(response.body == #"{"status":"ready"}"#)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func readyzNamesTheKeysWhileAppleCannotBeReached(_ engine: DatabaseEngine) async throws {
        // Port 1 on loopback: nothing listens, so the fetch fails at once, offline.
        try await withApp(engine: engine, configure: { $0.appleBaseURL = "http://127.0.0.1:1" }) { harness in
            var metrics = try await harness.get("/metrics").body
            _ = try await eventually(within: .seconds(60)) {
                metrics = try await harness.get("/metrics").body
                return metrics.contains("siwa_jwks_refreshes_total{")
            }
            let response = try await harness.get("/readyz")
            #expect(response.status == 503)
            #expect(response.body == #"{"status":"not_ready","reasons":["keys"]}"#)
            #expect(metrics.contains(#"siwa_jwks_refreshes_total{outcome="unavailable"}"#))
            #expect(metrics.contains(#"siwa_apple_requests_total{endpoint="keys",outcome="unavailable"}"#))
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func keysPersistedFromAnEarlierRunMakeTheServerReadyWhileAppleIsDown(_ engine: DatabaseEngine) async throws {
        try await withApp(engine: engine) { first in
            _ = try await first.waitUntilReady()
            await first.stopApplication()

            // The same database, Apple out of reach.
            var configuration = first.configuration
            configuration.appleBaseURL = "http://127.0.0.1:1"
            let second = try Application(configuration: configuration, accessLogSink: first.sink)
            try second.start()
            let response = await second.responder.respond(to: HTTPRequest(.get, "/readyz"))
            await second.stop()
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        }
    }

    @Test func theDatabaseIsCreatedAndMigratedAtStart() async throws {
        try await withApp(transport: .socket) { harness in
            let folder = try #require(harness.folder)
            #expect(FileManager.default.fileExists(atPath: folder + "/data/siwa.sqlite3"))
        }
    }

    @Test func metricsCountRequestsByRouteMethodAndStatus() async throws {
        try await withApp(transport: .socket) { harness in
            _ = try await harness.get("/healthz")
            _ = try await harness.get("/healthz")
            _ = try await harness.get("/no/such/path?code=secret-code")
            let metrics = try await harness.get("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(metrics.body.contains(#"siwa_http_requests_total{route="/healthz",method="GET",status="200"} 2"#))
            #expect(metrics.body.contains(#"siwa_http_requests_total{route="unmatched",method="GET",status="404"} 1"#))
            #expect(metrics.body.contains(#"siwa_http_request_duration_seconds_count{route="/healthz"} 2"#))
            #expect(metrics.body.contains(#"siwa_http_request_duration_seconds_bucket{route="/healthz",le="+Inf"} 2"#))
            // Paths never become labels, so neither do the secrets a path may carry.
            #expect(!metrics.body.contains("secret-code") && !metrics.body.contains("/no/such/path"))
            // SQLite's session cache has no listener to lose.
            #expect(!metrics.body.contains("siwa_session_cache_"))
        }
    }

    @Test func eachRequestWritesOneJSONAccessLine() async throws {
        try await withApp(transport: .socket) { harness in
            _ = try await harness.get("/healthz?token=abc123", headers: ["X-Request-Id": "access-1", "Authorization": "Bearer topsecret"])
            harness.sink.flush()
            let line = try #require(harness.lines.all.first { $0.contains("access-1") })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["level"] as? String == "info")
            #expect(object["message"] as? String == "request")
            #expect(object["time"] as? String != nil)
            #expect(object["path"] as? String == "/healthz")
            #expect(object["route"] as? String == "/healthz")
            #expect(object["status"] as? Int == 200)
            #expect(object["client"] as? String == "127.0.0.1")
            #expect(!line.contains("abc123") && !line.contains("topsecret"))
        }
    }

    @Test func accessLinesOfOneConnectionKeepTheirOrderAndAllAreWrittenAtStop() async throws {
        // Nothing drains in the background: every line written is written by the stop.
        let connections = 8
        try await withApp(transport: .socket, drainsInBackground: false) { harness in
            let requests = 40
            let port = harness.application.port
            // Each connection sends its requests pipelined, all at once, on its own thread; the
            // server's two I/O threads serve the eight connections concurrently.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for connection in 0..<connections {
                    group.addTask {
                        var text = ""
                        for index in 0..<requests {
                            let close = index == requests - 1 ? "Connection: close\r\n" : ""
                            text += "GET /order/c\(connection)/r\(index) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(close)\r\n"
                        }
                        let answer = try await HTTPGet.raw(port: port, text)
                        #expect(answer.components(separatedBy: "HTTP/1.1 404").count - 1 == requests)
                    }
                }
                try await group.waitForAll()
            }
            #expect(harness.lines.all.isEmpty)
            #expect(await harness.application.metrics.render().contains("siwa_log_lines_dropped_total 0\n"))
            await harness.stopApplication()
            var paths: [[Int]] = Array(repeating: [], count: connections)
            for line in harness.lines.all {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                guard object["label"] as? String == "siwa.access" else { continue }
                let parts = try #require(object["path"] as? String).split(separator: "/")
                try #require(parts.count == 3 && parts[0] == "order")
                paths[try #require(Int(parts[1].dropFirst()))].append(try #require(Int(parts[2].dropFirst())))
            }
            for connection in 0..<connections { #expect(paths[connection] == Array(0..<requests)) }
        }
    }

    @Test func forwardedForIsBelievedOnlyFromTrustedProxies() async throws {
        try await withApp(transport: .socket) { untrusted in
            _ = try await untrusted.get("/healthz", headers: ["X-Forwarded-For": "203.0.113.9", "X-Request-Id": "xff-untrusted"])
            untrusted.sink.flush()
            #expect(untrusted.lines.all.first { $0.contains("xff-untrusted") }?.contains(#""client":"127.0.0.1""#) == true)
        }

        try await withApp(transport: .socket, configure: { $0.trustedProxies = try! CIDRSet(cidrs: ["127.0.0.0/8"]) }) { trusted in
            _ = try await trusted.get("/healthz", headers: ["X-Forwarded-For": "198.51.100.7, 203.0.113.9", "X-Request-Id": "xff-trusted"])
            trusted.sink.flush()
            #expect(trusted.lines.all.first { $0.contains("xff-trusted") }?.contains(#""client":"203.0.113.9""#) == true)
        }
    }

    @Test func logLevelAboveInfoSilencesTheAccessLog() async throws {
        try await withApp(transport: .socket, configure: { $0.logLevel = .warning }) { harness in
            _ = try await harness.get("/healthz", headers: ["X-Request-Id": "quiet-1"])
            harness.sink.flush()
            #expect(!harness.lines.all.contains { $0.contains("quiet-1") })
        }
    }

    @Test func bodiesOverMaxBodyBytesAre413() async throws {
        try await withApp(transport: .socket, configure: { $0.maxBodyBytes = 64 }) { harness in
            let response = try await HTTPGet.raw(
                port: harness.application.port,
                "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 65\r\n\r\n" + String(repeating: "x", count: 65))
            #expect(response.hasPrefix("HTTP/1.1 413 "))
            #expect(response.contains(#"{"error":"payload_too_large""#))
        }
    }
}

@Suite struct ClientAddressTests {
    let proxies = try! CIDRSet(cidrs: ["10.0.0.0/8", "::1"])

    @Test func untrustedPeersAreTakenAtTheirWord() {
        #expect(ClientAddress.resolve(peer: "198.51.100.1", forwardedFor: "1.2.3.4", trusted: proxies) == "198.51.100.1")
        #expect(ClientAddress.resolve(peer: "10.0.0.1", forwardedFor: nil, trusted: proxies) == "10.0.0.1")
        #expect(ClientAddress.resolve(peer: "10.0.0.1", forwardedFor: "1.2.3.4", trusted: CIDRSet()) == "10.0.0.1")
    }

    @Test func theRightmostUntrustedHopIsTheClient() {
        #expect(ClientAddress.resolve(peer: "10.0.0.1", forwardedFor: "6.6.6.6, 1.2.3.4, 10.0.0.2", trusted: proxies) == "1.2.3.4")
        #expect(ClientAddress.resolve(peer: "::1", forwardedFor: "2001:db8::1", trusted: proxies) == "2001:db8::1")
    }

    @Test func garbageInTheHeaderStopsTheWalk() {
        #expect(ClientAddress.resolve(peer: "10.0.0.1", forwardedFor: "1.2.3.4, not-an-ip", trusted: proxies) == "10.0.0.1")
    }
}

@Suite struct AccessLogLineTests {
    @Test func formatsNumbersWithoutFoundation() {
        var bytes: [UInt8] = []
        AccessLogLine.appendMilliseconds(0.0012345, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "1.235")
        bytes = []
        AccessLogLine.appendInteger(-305, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "-305")
    }

    /// Every width, and both ends of `Int` (whose smallest value has no positive counterpart).
    @Test(arguments: [0, 7, 10, 99, 100, 305, -1, -305, 1_000_000_007, Int.max, Int.min])
    func formatsIntegersAsSwiftDoes(_ value: Int) {
        var bytes: [UInt8] = Array("x".utf8)
        AccessLogLine.appendInteger(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x\(value)")
    }

    @Test func jsonLinesKeepEveryFieldInOrder() {
        var record = AccessRecord(method: "POST", path: "/a\"b", requestBytes: 12, requestID: "r1", remoteAddress: "10.0.0.1", forwardedFor: nil)
        record.route = "/a/{id}"
        record.status = 201
        record.responseBytes = 34
        record.durationSeconds = 0.0125
        var line: [UInt8] = Array("left over".utf8)
        line.removeAll(keepingCapacity: true)
        AccessLogLine.append(record, client: "10.0.0.1", format: .json, time: .init(seconds: 1_795_000_000, milliseconds: 7), to: &line)
        #expect(line == AccessLogLine.make(record, client: "10.0.0.1", format: .json, time: .init(seconds: 1_795_000_000, milliseconds: 7)))
        #expect(String(decoding: line, as: UTF8.self) == #"{"time":"2026-11-18T11:06:40.007Z","level":"info","message":"request","label":"siwa.access","request_id":"r1","method":"POST","path":"/a\"b","route":"/a/{id}","status":201,"duration_ms":12.500,"bytes_in":12,"bytes_out":34,"client":"10.0.0.1"}"#)
    }

    @Test func textLinesNameTheRequest() {
        var record = AccessRecord(method: "GET", path: "/a\nb", requestBytes: 0, requestID: "r1", remoteAddress: "127.0.0.1", forwardedFor: nil)
        record.status = 404
        record.responseBytes = 10
        record.durationSeconds = 0.002
        let line = String(decoding: AccessLogLine.make(record, client: "127.0.0.1", format: .text, time: .init(seconds: 0, milliseconds: 5)), as: UTF8.self)
        #expect(line == #"1970-01-01T00:00:00.005Z info siwa.access: request request_id=r1 method=GET path=/a\nb route=unmatched status=404 duration_ms=2.000 client=127.0.0.1"#)
    }
}

@Suite struct PrometheusTextTests {
    @Test func histogramsAreCumulative() {
        var histogram = Histogram(bounds: [0.1, 1])
        histogram.observe(0.05)
        histogram.observe(0.5)
        histogram.observe(5)
        var output = ""
        histogram.render(name: "h", labels: #"route="/x""#, into: &output)
        #expect(output == """
            h_bucket{route="/x",le="0.1"} 1
            h_bucket{route="/x",le="1"} 2
            h_bucket{route="/x",le="+Inf"} 3
            h_sum{route="/x"} 5.55
            h_count{route="/x"} 3

            """)
    }

    @Test func labelValuesAreEscaped() {
        #expect(PrometheusText.labels(["a": "x\"y\\z\nw"]) == #"a="x\"y\\z\nw""#)
    }
}
