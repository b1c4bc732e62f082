import AppleSimulator
import HTTPClient
import JSON
import Testing
import WireFormat

/// `/sim/*` holds codes and client secrets (`/sim/log`) and acts as Apple: a page on another
/// site must not drive it with a form or a no-cors `fetch`, nor read it (issue 9, finding 5).
@Suite struct ControlRequestGuardTests {
    static func send(
        _ harness: SimulatorHarness, _ method: String, _ path: String, headers: [(String, String)], body: String = ""
    ) async throws -> HTTPClientResponse {
        try await harness.client.send(
            HTTPClientRequest(method: method, url: harness.baseURL + path, headers: headers, body: Array(body.utf8)), idempotent: false)
    }

    static let codeRequest = #"{"sub":"000123.0123456789abcdef0123456789abcdef.0123","client_id":"com.example.app"}"#

    @Test(arguments: ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain", "application/jsonp"])
    func aPostThatIsNotJSONIsRefused(_ contentType: String) async throws {
        try await withSimulator { harness in
            let keys = harness.simulator.keyIDs
            let response = try await Self.send(harness, "POST", "/sim/codes", headers: [("Content-Type", contentType)], body: Self.codeRequest)
            #expect(response.status == 415)
            #expect(response.errorCode == "unsupported_media_type")
            #expect(try await Self.send(harness, "POST", "/sim/rotate-keys", headers: [("Content-Type", contentType)]).status == 415)
            #expect(harness.simulator.keyIDs == keys, "nothing was done")
        }
    }

    @Test func aPostWithoutAContentTypeIsRefused() async throws {
        try await withSimulator { harness in
            let keys = harness.simulator.keyIDs
            let response = try await Self.send(harness, "POST", "/sim/rotate-keys", headers: [])
            #expect(response.status == 415)
            #expect(harness.simulator.keyIDs == keys)
        }
    }

    @Test(arguments: ["https://evil.example", "null", "http://127.0.0.1:1", "http://evil.example:80", "file://"])
    func aForeignOriginIsRefusedOnEveryRoute(_ origin: String) async throws {
        try await withSimulator { harness in
            let keys = harness.simulator.keyIDs
            let json = [("Content-Type", "application/json"), ("Origin", origin)]
            let codes = try await Self.send(harness, "POST", "/sim/codes", headers: json, body: Self.codeRequest)
            #expect(codes.status == 403)
            #expect(try codes.jsonObject()["error"]?.string == "forbidden")
            #expect(try await Self.send(harness, "GET", "/sim/log", headers: [("Origin", origin)]).status == 403)
            #expect(try await Self.send(harness, "DELETE", "/sim/faults", headers: [("Origin", origin)]).status == 403)
            #expect(try await Self.send(harness, "POST", "/sim/rotate-keys", headers: json).status == 403)
            #expect(harness.simulator.keyIDs == keys)
        }
    }

    @Test func jsonFromNoOriginOrTheSimulatorsOwnIsAccepted() async throws {
        try await withSimulator { harness in
            let plain = try await Self.send(harness, "POST", "/sim/codes", headers: [("Content-Type", "application/json; charset=utf-8")], body: Self.codeRequest)
            #expect(plain.status == 200)
            let own = "http://127.0.0.1:\(harness.simulator.port)"
            let same = try await Self.send(
                harness, "POST", "/sim/codes", headers: [("Content-Type", "application/json"), ("Origin", own)], body: Self.codeRequest)
            #expect(same.status == 200)
            #expect(try await Self.send(harness, "GET", "/sim/log", headers: [("Origin", own)]).status == 200)
            #expect(try await harness.get("/sim/log").status == 200)
        }
    }

    @Test func theConsentFormStillPostsFromItsOwnPage() async throws {
        try await withSimulator { harness in
            // The simulator's own form posts to /auth/authorize, which the guard does not cover.
            let own = "http://127.0.0.1:\(harness.simulator.port)"
            let fields = [
                ("client_id", "com.example.web"), ("redirect_uri", "https://app.example.com/cb"), ("response_type", "code id_token"),
                ("response_mode", "form_post"), ("scope", "name email"), ("state", "s"), ("nonce", "n"),
                ("email", "ada@example.com"), ("first_name", "Ada"), ("last_name", "L"), ("email_choice", "share"), ("action", "continue"),
            ]
            let response = try await Self.send(
                harness, "POST", "/auth/authorize",
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", own)],
                body: String(decoding: FormURLEncoding.encode(fields), as: UTF8.self))
            #expect(response.status == 200)
            #expect(response.text.contains(#"id="apple-form-post""#))
        }
    }
}
