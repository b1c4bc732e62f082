import AppleSimulator
import HTTPClient
import JOSE
import JSON
import Testing

@Suite struct ControlAPITests {
    @Test func aFaultAppliesToTheNextCallsThenTheEndpointRecovers() async throws {
        try await withSimulator { harness in
            let added = try await harness.postJSON("/sim/faults", [
                ("endpoint", .string("keys")), ("status", .integer(503)), ("delay_ms", .integer(300)), ("count", .integer(2)),
            ])
            #expect(added.status == 200)
            for _ in 0..<2 {
                let clock = ContinuousClock()
                let start = clock.now
                let response = try await harness.get("/auth/keys")
                #expect(clock.now - start >= .milliseconds(300))
                #expect(response.status == 503)
                #expect(response.errorCode != nil, "an Apple-like error body")
            }
            let recovered = try await harness.get("/auth/keys")
            #expect(recovered.status == 200)
            #expect(try recovered.jsonObject()["keys"] != nil)
        }
    }

    @Test func garbageAndTruncatedBodies() async throws {
        try await withSimulator { harness in
            _ = try await harness.postJSON("/sim/faults", [("endpoint", .string("keys")), ("body", .string("garbage"))])
            let garbage = try await harness.get("/auth/keys")
            #expect(garbage.status == 200)
            #expect((try? JSONParser.parse(garbage.body)) == nil)
            _ = try await harness.postJSON("/sim/faults", [("endpoint", .string("keys")), ("body", .string("truncated"))])
            let truncated = try await harness.get("/auth/keys")
            #expect(truncated.status == 200)
            #expect(truncated.text.hasPrefix(#"{"keys":[{"#))
            #expect((try? JSONParser.parse(truncated.body)) == nil)
            #expect(try await harness.get("/auth/keys").jsonObject()["keys"] != nil)
        }
    }

    @Test func faultsCanBeCleared() async throws {
        try await withSimulator { harness in
            _ = try await harness.postJSON("/sim/faults", [
                ("endpoint", .string("token")), ("status", .integer(500)), ("count", .integer(10)),
            ])
            #expect(try await harness.postForm("/auth/token", []).status == 500)
            #expect(try await harness.delete("/sim/faults").status == 200)
            #expect(try await harness.postForm("/auth/token", []).status == 400)
            let bad = try await harness.postJSON("/sim/faults", [("endpoint", .string("nowhere"))])
            #expect(bad.status == 400)
            #expect(bad.errorCode == "invalid_request")
        }
    }

    @Test func theLogRecordsEveryCallWithItsParameters() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode()
            _ = try await harness.get("/auth/keys")
            _ = try await harness.exchange(code: code)
            let log = try await harness.get("/sim/log")
            let calls = try #require(try log.jsonObject()["calls"]?.array?.compactMap(\.object))
            #expect(calls.map { $0["endpoint"]?.string } == ["keys", "token"], "control calls are not logged")
            let token = calls[1]
            #expect(token["method"]?.string == "POST")
            #expect(token["time"]?.integer == harness.clock.now)
            let params = try #require(token["params"]?.object)
            #expect(params["code"]?.string == code)
            #expect(params["grant_type"]?.string == "authorization_code")
            #expect(params["client_secret"]?.string?.split(separator: ".").count == 3)
            #expect(harness.simulator.calls.count == 2)
            #expect(harness.simulator.calls[1].parameters["client_id"] == "com.example.app")
        }
    }

    @Test func revokeConsentAndDeleteAccountKillTokens() async throws {
        try await withSimulator { harness in
            let sub = "000999.ffffffffffffffffffffffffffffffff.0999"
            let first = try await harness.exchange(code: try await harness.nativeCode(sub: sub).code).jsonObject()
            let revoked = try await harness.postJSON("/sim/revoke-consent", [("sub", .string(sub)), ("client_id", .string("com.example.app"))])
            #expect(try revoked.jsonObject()["revoked_tokens"]?.integer == 2)
            #expect(try await harness.refresh(try #require(first["refresh_token"]?.string)).errorCode == "invalid_grant")

            let second = try await harness.exchange(code: try await harness.nativeCode(sub: sub).code).jsonObject()
            let (pendingCode, _) = try await harness.nativeCode(sub: sub)
            let deleted = try await harness.postJSON("/sim/delete-account", [("sub", .string(sub))])
            #expect(try deleted.jsonObject()["deleted"] == .bool(true))
            #expect(try await harness.refresh(try #require(second["refresh_token"]?.string)).errorCode == "invalid_grant")
            #expect(try await harness.exchange(code: pendingCode).errorCode == "invalid_grant")
        }
    }

    @Test func aDeletedAppleIDSigningUpAgainGetsANewSub() async throws {
        try await withSimulator { harness in
            let sub = harness.simulator.subject(forAppleID: "ada@example.com")
            #expect(sub.wholeMatch(of: /000\d{3}\.[0-9a-f]{32}\.\d{4}/) != nil, "Apple's sub shape")
            #expect(harness.simulator.subject(forAppleID: "ADA@example.com") == sub)
            harness.simulator.deleteAccount(sub: sub)
            #expect(harness.simulator.subject(forAppleID: "ada@example.com") != sub)
        }
    }

    @Test func codesNeedSubAndClient() async throws {
        try await withSimulator { harness in
            let response = try await harness.postJSON("/sim/codes", [("sub", .string("000123.x.0123"))])
            #expect(response.status == 400)
            #expect(response.errorCode == "invalid_request")
            let notJSON = try await harness.post("/sim/codes", contentType: "application/json", body: "{")
            #expect(notJSON.status == 400)
        }
    }

    @Test func theInProcessHelpersMirrorTheControlAPI() async throws {
        try await withSimulator { harness in
            let issued = try harness.simulator.issueCode(sub: "000123.0123456789abcdef0123456789abcdef.0123", clientID: "com.example.app", nonce: "n")
            #expect(try CompactJWS(issued.identityToken).payload["nonce"]?.string == "n")
            harness.simulator.injectFault(SimulatorFault(endpoint: .token, status: 400, error: "invalid_client"))
            let refused = try await harness.exchange(code: issued.code)
            #expect(refused.status == 400)
            #expect(refused.errorCode == "invalid_client")
            #expect(try await harness.exchange(code: issued.code).status == 200, "the fault answered without touching the code")
            let payload = try harness.simulator.notificationPayload(NotificationEvent(type: "account-delete", sub: issued.sub))
            #expect(try CompactJWS(payload).payload["events"]?.string?.contains("account-delete") == true)
        }
    }
}
