import AppleSimulator
import Glibc
import HTTPClient
import JOSE
import JSON
import Testing

@Suite struct StatePersistenceTests {
    @Test func stateSurvivesARestart() async throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let clock = TestClock()
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
}
