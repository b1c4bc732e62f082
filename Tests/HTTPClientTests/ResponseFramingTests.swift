import HTTPClient
import HTTPServer
import Testing
import WireFormat

/// Response framing and decoding against a server that writes exact bytes.
@Suite struct ResponseFramingTests {
    private func fetch(
        _ response: [UInt8], close: Bool = false, method: String = "GET", maxResponseBytes: Int = 1 << 20
    ) async throws -> Result<HTTPClientResponse, HTTPClientError> {
        let server = try ScriptedServer { _, _, _ in close ? .respondAndClose(response) : .respond(response) }
        defer { server.stop() }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(maxResponseBytes: maxResponseBytes))
        do {
            return .success(try await client.send(HTTPClientRequest(method: method, url: "http://127.0.0.1:\(server.port)/x"), idempotent: true))
        } catch {
            return .failure(error)
        }
    }

    @Test func chunkedBodiesWithExtensionsAndTrailersAreDecoded() async throws {
        let wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
            + "4;ext=1\r\nSign\r\n8\r\n in with\r\n6;a;b=\"c\"\r\n Apple\r\n0\r\nX-Checksum: none\r\n\r\n"
        let response = try await fetch(Array(wire.utf8)).get()
        #expect(response.text == "Sign in with Apple")
        #expect(response.header("Content-Type") == "text/plain")
    }

    @Test func gzipBodiesAreInflatedWhetherLengthFramedOrChunked() async throws {
        let text = String(repeating: "sign in with apple ", count: 300)
        let compressed = try #require(Gzip.compress(Array(text.utf8)))
        let lengthFramed = Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(compressed.count)\r\n\r\n".utf8) + compressed
        let first = try await fetch(lengthFramed).get()
        #expect(first.text == text)
        #expect(first.header("Content-Encoding") == nil)

        let half = compressed.count / 2
        let hex = { (n: Int) in String(n, radix: 16) }
        var chunked = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n".utf8)
        chunked += Array("\(hex(half))\r\n".utf8) + compressed[..<half] + Array("\r\n\(hex(compressed.count - half))\r\n".utf8)
        chunked += compressed[half...] + Array("\r\n0\r\n\r\n".utf8)
        #expect(try await fetch(chunked).get().text == text)
    }

    @Test func aBodyDelimitedByCloseIsRead() async throws {
        let response = try await fetch(Array("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end".utf8), close: true).get()
        #expect(response.text == "until the end")
    }

    @Test func interimResponsesAndBodilessStatusesAreHandled() async throws {
        let interim = try await fetch(Array("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)).get()
        #expect(interim.status == 200)
        #expect(interim.text == "ok")
        let noContent = try await fetch(Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)).get()
        #expect(noContent.status == 204)
        #expect(noContent.body.isEmpty)
        let head = try await fetch(Array("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n".utf8), method: "HEAD").get()
        #expect(head.header("Content-Length") == "50")
        #expect(head.body.isEmpty)
    }

    @Test func aServerThatClosesMidBodyFails() async throws {
        let result = await (try? fetch(Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part".utf8), close: true))
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(String(describing: result))")
            return
        }
        #expect(error.isMalformedResponse, "\(error)")

        let chunked = await (try? fetch(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort".utf8), close: true))
        guard case .failure(let chunkedError) = chunked else {
            Issue.record("expected a failure, got \(String(describing: chunked))")
            return
        }
        #expect(chunkedError.isMalformedResponse, "\(chunkedError)")
    }

    @Test func aServerThatClosesBeforeAnyResponseByteFails() async throws {
        let server = try ScriptedServer { _, _, _ in .closeWithoutResponse }
        defer { server.stop() }
        let client = try HTTPClient()
        let error = await failure { () async throws(HTTPClientError) in
            try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/"), idempotent: true)
        }
        #expect(error == .connectionClosed(mayHaveBeenSent: true))
    }

    @Test func responsesOverTheLimitAreRefused() async throws {
        let limit = 1000
        let body = String(repeating: "a", count: 1001)
        let declared = try await fetch(RawResponse.ok(body), maxResponseBytes: limit)
        #expect(declared.failureValue == .responseTooLarge)

        let chunked = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n\(String(repeating: "b", count: 1000))\r\n1\r\nc\r\n0\r\n\r\n".utf8)
        #expect(try await fetch(chunked, maxResponseBytes: limit).failureValue == .responseTooLarge)

        let untilClose = Array("HTTP/1.1 200 OK\r\n\r\n\(body)".utf8)
        #expect(try await fetch(untilClose, close: true, maxResponseBytes: limit).failureValue == .responseTooLarge)

        // Small on the wire, over the limit once inflated.
        let bomb = try #require(Gzip.compress([UInt8](repeating: 0x20, count: 50_000)))
        #expect(bomb.count < limit)
        let gzip = Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(bomb.count)\r\n\r\n".utf8) + bomb
        #expect(try await fetch(gzip, maxResponseBytes: limit).failureValue == .responseTooLarge)

        // Exactly at the limit is fine.
        #expect(try await fetch(RawResponse.ok(String(body.dropFirst())), maxResponseBytes: limit).get().body.count == limit)
    }

    @Test func malformedResponsesAreRefused() async throws {
        let cases = [
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
            "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            "HTTP/2 200 OK\r\n\r\n",
            "SSH-2.0-OpenSSH\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP/1.1 200 OK\r\n folded: header\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 1\r\n\r\nx",
        ]
        for wire in cases {
            let result = try await fetch(Array(wire.utf8), close: true)
            #expect(result.failureValue?.isMalformedResponse == true, "\(wire.debugDescription) gave \(result)")
        }
    }

    @Test func errorDescriptionsCarryNoSecrets() async throws {
        let server = try ScriptedServer { _, _, _ in .respondAndClose(Array("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nx".utf8)) }
        defer { server.stop() }
        let client = try HTTPClient()
        let error = await failure { () async throws(HTTPClientError) in
            try await client.send(
                HTTPClientRequest(
                    method: "POST", url: "http://127.0.0.1:\(server.port)/auth/token?q=1", headers: [("Authorization", "Bearer TOKEN-SECRET")],
                    body: FormURLEncoding.encode([("client_secret", "CLIENT-SECRET"), ("code", "CODE-SECRET")])),
                idempotent: false)
        }
        let text = String(describing: error)
        #expect(error?.isMalformedResponse == true)
        for secret in ["SECRET", "Bearer", "client_secret"] { #expect(!text.contains(secret), "\(text)") }
    }
}

extension Result where Failure == HTTPClientError {
    var failureValue: HTTPClientError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
