import AppleSimulator
import Foundation
import Glibc
import HTTPClient
import JOSE
import JSON
import Testing
import TestSupport

@Suite struct StatePersistenceTests {
    @Test func stateSurvivesARestart() async throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let clock = HeldClock(simulatorStart)
        var refreshToken = ""
        var kids: [String] = []
        var developerKey = ""
        let sub = "000123.0123456789abcdef0123456789abcdef.0123"
        var pendingCode = ""
        try await withSimulator(stateDirectory: directory, clock: clock) { harness in
            kids = harness.simulator.keyIDs
            developerKey = harness.simulator.developerKeyPEM
            refreshToken = try #require(try await harness.exchange(code: try await harness.nativeCode(sub: sub).code).jsonObject()["refresh_token"]?.string)
            pendingCode = try await harness.nativeCode(sub: sub).code
        }
        let keyFile = "\(directory)/AuthKey_SIMKEY0001.p8"
        #expect(access(keyFile, R_OK) == 0, "the developer key is saved like a download from Apple's portal")
        #expect(access("\(directory)/state.json", R_OK) == 0)

        try await withSimulator(stateDirectory: directory, clock: clock) { harness in
            #expect(harness.simulator.keyIDs == kids)
            #expect(harness.simulator.developerKeyPEM == developerKey)
            let refreshed = try await harness.refresh(refreshToken)
            #expect(refreshed.status == 200, "\(refreshed.text)")
            #expect(try await harness.exchange(code: pendingCode).status == 200)
            let idToken = try #require(try refreshed.jsonObject()["id_token"]?.string)
            #expect(kids.contains(try #require(try CompactJWS(idToken).keyID)))
        }
    }

    /// New Hide My Email addresses are at `private.icloud.com` (Apple is reported to issue them
    /// there now); a state saved when they were at `privaterelay.appleid.com` keeps working: the
    /// person keeps their address, still a relay, for every app of the team.
    @Test func relayAddressesSavedAtTheOldDomainKeepWorking() async throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let clock = HeldClock(simulatorStart)
        let flows = AuthorizeEndpointTests()
        func claims(_ form: HTMLForm) throws -> JSONObject { try CompactJWS(try #require(form.fields["id_token"])).payload }
        var issued = ""
        try await withSimulator(stateDirectory: directory, clock: clock) { harness in
            let ada = try claims(try await flows.consent(harness, appleID: "ada@example.com", firstName: "Ada", lastName: "L", hide: true))
            issued = try #require(ada["email"]?.string)
            #expect(issued.hasSuffix("@private.icloud.com"), "a new relay address is at the new domain")
            #expect(ada["is_private_email"] == .string("true"))
        }

        // The same state as an earlier simulator saved it, its relay addresses at the old domain.
        let path = directory + "/state.json"
        let old = issued.replacingOccurrences(of: "@private.icloud.com", with: "@privaterelay.appleid.com")
        let saved = try String(contentsOfFile: path, encoding: .utf8)
        #expect(saved.contains(issued))
        try saved.replacingOccurrences(of: issued, with: old).write(toFile: path, atomically: true, encoding: .utf8)

        try await withSimulator(stateDirectory: directory, clock: clock) { harness in
            let web = try claims(try await flows.consent(harness, appleID: "ada@example.com", firstName: "Ada", lastName: "L", hide: true))
            #expect(web["email"]?.string == old && web["is_private_email"] == .string("true"), "the app's grant keeps its address")
            let other = try claims(
                try await flows.consent(harness, clientID: "com.example.other", appleID: "ada@example.com", firstName: "Ada", lastName: "L", hide: true))
            #expect(other["email"]?.string == old && other["is_private_email"] == .string("true"), "the person keeps theirs for another app")
            let grace = try claims(try await flows.consent(harness, appleID: "grace@example.com", firstName: "Grace", lastName: "H", hide: true))
            #expect(grace["email"]?.string?.hasSuffix("@private.icloud.com") == true && grace["is_private_email"] == .string("true"))
        }
    }
}
