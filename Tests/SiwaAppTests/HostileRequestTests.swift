import Foundation
import JSON
import Synchronization
import Testing
@testable import SiwaApp

/// Hostile requests against the assembled application (issue 9, docs/reference/http-api.md): each gets a clear
/// error, the server keeps serving others, and nothing is stored that should not be.
@Suite struct HostileRequestTests {
    /// 1 MiB of short distinct keys: answered (400, the token is missing) rather than parsed in
    /// quadratic time, and with one I/O thread `/healthz` still answers meanwhile.
    @Test func aBodyOfManyDistinctKeysIsAnsweredAndDoesNotStallTheLoop() async throws {
        try await withFixture(NativeSignInTests.Fixture { $0.threads = 1 }) { fixture in
            // Three-letter keys from 62 letters: 130,000 of them, distinct, just under 1 MiB.
            let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
            var text = "{"
            for index in 0..<130_000 {
                text += "\"\(letters[index % 62])\(letters[index / 62 % 62])\(letters[index / 3_844])\":0,"
            }
            text += "\"device_name\":\"x\"}"
            #expect(text.utf8.count < 1 << 20)
            let request = "POST /api/auth/apple HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(text.utf8.count)\r\n\r\n\(text)"
            let port = fixture.harness.application.port
            async let big = HTTPGet.raw(port: port, request)
            let health = try await fixture.harness.get("/healthz")
            #expect(health.status == 200)
            let reply = try await big
            #expect(reply.hasPrefix("HTTP/1.1 400"))
            #expect(reply.contains("\"invalid_request\""))
            #expect(try fixture.count("users") == 0)
        }
    }

    @Test func theNonceRouteIsRateLimitedPerClientAndRefusalsWriteNothing() async throws {
        try await withFixture(NativeSignInTests.Fixture { $0.rateLimit = RateLimit(requests: 3, perSeconds: 3_600) }) { fixture in
            for _ in 0..<3 { #expect(try await fixture.post("/api/auth/apple/nonce").status == 201) }
            let refused = try await fixture.post("/api/auth/apple/nonce")
            #expect(refused.status == 429)
            #expect(refused.body.contains("\"too_many_requests\""))
            #expect(Int(refused.headers["retry-after"] ?? "") ?? 0 >= 1)
            #expect(try fixture.count("issued_nonces") == 3)
            // Signed-in and operational routes are not limited.
            #expect(try await fixture.harness.get("/healthz").status == 200)
        }
    }

    @Test func theLoginRouteIsRateLimitedAndSignInToo() async throws {
        try await withFixture(NativeSignInTests.Fixture {
            $0.rateLimit = RateLimit(requests: 2, perSeconds: 3_600)
            $0.webClientID = "com.example.web"
        }) { fixture in
            #expect(try await fixture.harness.get("/auth/apple/login").status == 302)
            #expect(try await fixture.harness.get("/auth/apple/login").status == 302)
            #expect(try await fixture.harness.get("/auth/apple/login").status == 429)
            #expect(try fixture.count("web_sign_ins") == 2)
            // The sign-in route has a bucket of the same size per client address.
            _ = try await fixture.signIn([("identity_token", .string("a.b.c"))])
            _ = try await fixture.signIn([("identity_token", .string("a.b.c"))])
            #expect(try await fixture.signIn([("identity_token", .string("a.b.c"))]).status == 429)
        }
    }

    /// Behind a trusted proxy each forwarded client has its own bucket, and the address is read
    /// from every `X-Forwarded-For` line, right to left: a spoofed leftmost entry changes nothing.
    @Test func behindATrustedProxyEachForwardedClientHasItsOwnBucket() async throws {
        try await withFixture(NativeSignInTests.Fixture {
            $0.rateLimit = RateLimit(requests: 1, perSeconds: 3_600)
            $0.trustedProxies = try! CIDRSet(cidrs: ["127.0.0.1/32"])
        }) { fixture in
            let first = ["X-Forwarded-For": "203.0.113.1"]
            #expect(try await fixture.post("/api/auth/apple/nonce", headers: first).status == 201)
            #expect(try await fixture.post("/api/auth/apple/nonce", headers: first).status == 429)
            #expect(try await fixture.post("/api/auth/apple/nonce", headers: ["X-Forwarded-For": "203.0.113.2"]).status == 201)
            // A client that adds its own line before the proxy's is still 203.0.113.1.
            let spoofed = try await fixture.post(
                "/api/auth/apple/nonce", rawHeaders: "X-Forwarded-For: 198.51.100.99\r\nX-Forwarded-For: 203.0.113.1\r\n")
            #expect(spoofed.status == 429)
        }
    }

    /// 150,000 combining marks are one Character: a cap in Characters kept them all.
    @Test func storedClientStringsAreCutTo256BytesAtAScalarBoundary() async throws {
        try await withFixture(NativeSignInTests.Fixture()) { fixture in
            let marks = "a" + String(repeating: "\u{0301}", count: 150_000)
            let issued = try fixture.simulator.issueCode(sub: NativeSignInTests.sub(90), clientID: NativeSignInTests.app, nonce: "n-90")
            let reply = try await fixture.signIn([
                ("identity_token", .string(issued.identityToken)), ("nonce", .string("n-90")), ("device_name", .string(marks)),
                ("user", .object(JSONObject([("name", .object(JSONObject([("firstName", .string(marks)), ("lastName", .string("é" + marks))])))]))),
            ])
            #expect(reply.status == 200, "\(reply.body.prefix(200))")
            let stored = try fixture.database.read { connection in
                try connection.queryOne("SELECT s.device_name, u.given_name, u.family_name FROM sessions s JOIN users u ON u.id = s.user_id")
            }
            for column in 0..<3 {
                let text = try #require(try stored?.optionalString(column))
                #expect(text.utf8.count <= 256 && text.utf8.count >= 250)
                #expect(text.unicodeScalars.allSatisfy { $0 == "a" || $0 == "é" || $0 == "\u{0301}" })
            }
        }
    }
}

extension NativeSignInTests.Fixture {
    func post(_ path: String, headers: [String: String] = [:], rawHeaders: String = "") async throws -> (status: Int, headers: [String: String], body: String) {
        var request = "POST \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 0\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        let text = try await HTTPGet.raw(port: harness.application.port, request + rawHeaders + "\r\n")
        guard let split = text.range(of: "\r\n\r\n") else { throw HTTPGet.Failure.malformed }
        var lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let status = Int(lines.removeFirst().split(separator: " ").dropFirst().first ?? "") ?? 0
        var fields: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, fields, String(text[split.upperBound...]))
    }
}
