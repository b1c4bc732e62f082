import AppleSimulator
import HTTPClient
import JSON
import Testing

@Suite struct TLSModeTests {
    @Test func keysAreServedOverHTTPSToAClientTrustingTheSimulatorsCA() async throws {
        try await withSimulator(tls: true) { harness in
            #expect(harness.baseURL.hasPrefix("https://localhost:"))
            #expect(harness.simulator.caCertificatePEM?.contains("BEGIN CERTIFICATE") == true)
            let response = try await harness.get("/auth/keys")
            #expect(response.status == 200)
            #expect(try response.jsonObject()["keys"]?.array?.isEmpty == false)
        }
    }

    @Test func aClientNotTrustingTheCAIsRefused() async throws {
        try await withSimulator(tls: true) { harness in
            let stranger = try HTTPClient(configuration: HTTPClientConfiguration(trustOnlyExtraCAs: true, workerThreads: 1))
            await #expect(throws: (any Error).self) {
                _ = try await stranger.send(HTTPClientRequest(url: harness.baseURL + "/auth/keys"), idempotent: true)
            }
        }
    }
}
