import AppleSimulator
import HTTPClient
import JOSE
import JSON
import Testing
import WireFormat

@Suite struct KeysEndpointTests {
    @Test func publishesSeveralRS256KeysWithKidsOfDifferentLengths() async throws {
        try await withSimulator { harness in
            let response = try await harness.get("/auth/keys")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json;charset=UTF-8")
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("Pragma") == "no-cache")
            let keys = try #require(try response.jsonObject()["keys"]?.array)
            #expect(keys.count >= 2)
            var kids: [String] = []
            for entry in keys {
                let jwk = try #require(entry.object)
                #expect(jwk["kty"]?.string == "RSA")
                #expect(jwk["use"]?.string == "sig")
                #expect(jwk["alg"]?.string == "RS256")
                #expect(jwk["e"]?.string == "AQAB")
                let modulus = try #require(jwk["n"]?.string.flatMap(Base64.url.decode))
                #expect(modulus.count == 256)
                kids.append(try #require(jwk["kid"]?.string))
            }
            #expect(Set(kids).count == kids.count)
            #expect(Set(kids.map(\.count)).count > 1, "kids of one length hide clients that assume a length")
            _ = try await harness.keySet()
        }
    }

    @Test func rotationKeepsThePreviousKeyPublishedAndDropsItAfterThreeRotations() async throws {
        try await withSimulator { harness in
            let signing = try #require(harness.simulator.keyIDs.last)
            let (_, tokenBefore) = try await harness.nativeCode()
            #expect(try CompactJWS(tokenBefore).keyID == signing)

            let rotated = try await harness.post("/sim/rotate-keys", contentType: "application/json", body: "")
            #expect(rotated.status == 200)
            let current = try #require(try rotated.jsonObject()["current"]?.string)
            #expect(current != signing)
            var published = try await harness.keySet()
            #expect(published[signing] != nil, "the previous key stays published after one rotation")
            #expect(published[current] != nil)
            let (_, tokenAfter) = try await harness.nativeCode()
            #expect(try CompactJWS(tokenAfter).keyID == current)

            _ = try await harness.post("/sim/rotate-keys", contentType: "application/json", body: "")
            published = try await harness.keySet()
            #expect(published[signing] != nil)
            #expect(published.keys.count == 3)
            _ = try await harness.post("/sim/rotate-keys", contentType: "application/json", body: "")
            published = try await harness.keySet()
            #expect(published[signing] == nil, "dropped after three rotations")
            #expect(published.keys.count == 3)
        }
    }
}
