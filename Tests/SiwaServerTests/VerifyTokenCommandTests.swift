import TestSupport
import AppleSimulator
import Foundation
import Testing

/// `verify-token` as a developer runs it against keys served by the simulator (docs/reference/command-line.md, docs/reference/http-api.md).
@Suite struct VerifyTokenCommandTests {
    static let sub = "001234.0123456789abcdef0123456789abcdef.0123"

    private func withSimulator(_ body: (AppleIDSimulator) async throws -> Void) async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        do {
            try await body(simulator)
        } catch {
            await simulator.stop()
            throw error
        }
        await simulator.stop()
    }

    private func verify(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ServerProcess.run(["verify-token"] + arguments, environment: environment)
    }

    @Test func aGoodTokenPrintsItsClaimsAndNotesWhatWasNotChecked() async throws {
        try await withSimulator { simulator in
            let token = try simulator.issueCode(sub: Self.sub, clientID: "com.example.app", nonce: "n-1").identityToken
            let result = try await verify([token, "--jwks", simulator.baseURL + "/auth/keys"])
            #expect(result.status == 0, "\(result.stderr)")
            let claims = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            #expect(claims?["sub"] as? String == Self.sub)
            #expect(claims?["aud"] as? String == "com.example.app")
            #expect(result.stderr.contains("audience not checked"))
            #expect(result.stderr.contains("nonce not checked"))
        }
    }

    @Test func eachRefusalNamesItsReason() async throws {
        try await withSimulator { simulator in
            let token = try simulator.issueCode(sub: Self.sub, clientID: "com.example.app", nonce: "n-1").identityToken
            let keys = ["--jwks", simulator.baseURL + "/auth/keys"]
            let cases: [([String], String)] = [
                ([token, "--audience", "com.other.app"] + keys, "wrong_audience"),
                ([token, "--audience", "com.example.app", "--nonce", "n-2"] + keys, "nonce_mismatch"),
                ([token, "--now", "4102444800"] + keys, "expired"),
                ([token, "--now", "946684800"] + keys, "issued_in_future"),
                (["not.a.token"] + keys, "malformed"),
            ]
            for (arguments, reason) in cases {
                let result = try await verify(arguments)
                #expect(result.status == 1)
                #expect(result.stdout.isEmpty)
                #expect(result.stderr.hasPrefix("token refused: \(reason)\n"), "\(arguments.dropLast(2)): \(result.stderr)")
            }
            let matching = try await verify([token, "--audience", "com.example.app", "--nonce", "n-1"] + keys)
            #expect(matching.status == 0)
            #expect(matching.stderr.contains("nonce matched as raw"))
        }
    }

    @Test func keysFromAFileAndAudiencesFromTheConfiguration() async throws {
        try await withSimulator { simulator in
            let token = try simulator.issueCode(sub: Self.sub, clientID: "com.example.app", nonce: "n").identityToken
            let folder = ServerProcess.makeFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let jwks = try await HTTPRequest.get(port: simulator.port, path: "/auth/keys").components(separatedBy: "\r\n\r\n").last ?? ""
            try jwks.write(toFile: folder + "/keys.json", atomically: true, encoding: .utf8)
            let refused = try await verify([token, "--jwks", folder + "/keys.json"], environment: ["SIWA_CLIENT_IDS": "com.example.web"])
            #expect(refused.stderr.hasPrefix("token refused: wrong_audience"))
            let accepted = try await verify([token, "--jwks", folder + "/keys.json"], environment: ["SIWA_CLIENT_IDS": "com.example.app"])
            #expect(accepted.status == 0)
            #expect(!accepted.stderr.contains("audience not checked"))
        }
    }

    @Test func aNotificationIsCheckedAsANotification() async throws {
        try await withSimulator { simulator in
            let payload = try simulator.notificationPayload(NotificationEvent(type: "consent-revoked", sub: Self.sub, clientID: "com.example.app"))
            let result = try await verify([payload, "--jwks", simulator.baseURL + "/auth/keys", "--audience", "com.example.app"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("valid notification"))
            #expect(result.stdout.contains("consent-revoked"))
        }
    }

    @Test func unreachableKeysAreReportedAsSuch() async throws {
        let result = try await verify(["a.b.c", "--jwks", "http://127.0.0.1:1/auth/keys"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("cannot load Apple's keys"))
    }
}
