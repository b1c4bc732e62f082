import TestSupport
import AppleSimulator
import Glibc
import HTTPClient
import JOSE
import OpenSSLCrypto
import Synchronization
import Testing
import WireFormat
@testable import AppleClient

@Suite struct AppleAPITests {
    static let sub = "000001.00000000000000000000000000000002.0002"

    private func api(_ simulator: AppleIDSimulator, observer: (any AppleCallObserver)? = nil) throws -> AppleAPI {
        let minter = ClientSecretMinter(teamID: simulator.teamID, keyID: simulator.keyID, key: try P256PrivateKey(pem: simulator.developerKeyPEM))
        return AppleAPI(
            baseURL: simulator.baseURL, http: try HTTPClient(), secrets: minter, observer: observer,
            clock: { Int64(time(nil)) }, monotonic: { Double(time(nil)) })
    }

    @Test func exchangesANativeCodeAndValidatesTheRefreshToken() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let api = try api(simulator)
        let code = try simulator.issueCode(sub: Self.sub, clientID: "com.example.app").code
        let tokens = try await api.exchangeCode(code, clientID: "com.example.app", redirectURI: nil)
        #expect(!tokens.accessToken.isEmpty)
        let refresh = try #require(tokens.refreshToken)
        #expect(tokens.idToken != nil)
        let validated = try await api.validateRefreshToken(refresh, clientID: "com.example.app")
        #expect(validated.refreshToken == nil)
        // The exchange was form-encoded with a client secret for that client id, and no redirect_uri.
        let exchange = try #require(simulator.calls.first { $0.endpoint == "token" })
        #expect(exchange.contentType?.hasPrefix("application/x-www-form-urlencoded") == true)
        #expect(exchange.parameters["redirect_uri"] == nil)
        #expect(exchange.parameters["client_id"] == "com.example.app")
        await simulator.stop()
    }

    @Test func applesRefusalsAreSortedIntoTheRightErrors() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let api = try api(simulator)
        let code = try simulator.issueCode(sub: Self.sub, clientID: "com.example.app").code
        await #expect(throws: AppleAPIError.invalidGrant) { try await api.exchangeCode(code, clientID: "com.example.web", redirectURI: nil) }
        await #expect(throws: AppleAPIError.invalidGrant) { try await api.validateRefreshToken("not-a-token", clientID: "com.example.app") }

        let stranger = AppleAPI(
            baseURL: simulator.baseURL, http: try HTTPClient(),
            secrets: ClientSecretMinter(teamID: simulator.teamID, keyID: simulator.keyID, key: try P256PrivateKey.generate()),
            clock: { Int64(time(nil)) }, monotonic: { 0 })
        await #expect(throws: AppleAPIError.invalidClient) { try await stranger.validateRefreshToken("x", clientID: "com.example.app") }

        simulator.injectFault(SimulatorFault(endpoint: .token, status: 503))
        await #expect(throws: AppleAPIError.self) { try await api.validateRefreshToken("x", clientID: "com.example.app") }
        simulator.injectFault(SimulatorFault(endpoint: .token, status: 200, body: .garbage))
        do {
            _ = try await api.validateRefreshToken("x", clientID: "com.example.app")
            Issue.record("garbage was accepted")
        } catch {
            guard case .unavailable = error else { Issue.record("expected unavailable, got \(error)"); return }
        }
        await simulator.stop()
    }

    @Test func aCodeIsSentToAppleAtMostOnceEvenWhenTheAnswerIsLost() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let api = try api(simulator)
        let code = try simulator.issueCode(sub: Self.sub, clientID: "com.example.app").code
        simulator.injectFault(SimulatorFault(endpoint: .token, status: 200, body: .truncated))
        do {
            _ = try await api.exchangeCode(code, clientID: "com.example.app", redirectURI: nil)
            Issue.record("a truncated answer was accepted")
        } catch {
            guard case .unavailable = error else { Issue.record("expected unavailable, got \(error)"); return }
        }
        #expect(simulator.calls.filter { $0.parameters["code"] == code }.count == 1)
        await simulator.stop()
    }

    @Test func revocationSucceedsAndRecordsMetrics() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let observer = RecordingObserver()
        let api = try api(simulator, observer: observer)
        let tokens = try await api.exchangeCode(
            try simulator.issueCode(sub: Self.sub, clientID: "com.example.app").code, clientID: "com.example.app", redirectURI: nil)
        try await api.revoke(try #require(tokens.refreshToken), kind: .refresh, clientID: "com.example.app")
        await #expect(throws: AppleAPIError.invalidGrant) {
            try await api.validateRefreshToken(tokens.refreshToken!, clientID: "com.example.app")
        }
        #expect(observer.outcomes == ["token:ok", "revoke:ok", "token:invalid_grant"])
        await simulator.stop()
    }

    @Test func appleBeingSlowOrDownIsUnavailable() async throws {
        let down = AppleAPI(
            baseURL: "http://127.0.0.1:1", http: try HTTPClient(),
            secrets: ClientSecretMinter(teamID: "TEAM123456", keyID: "KEY1234567", key: try P256PrivateKey.generate()),
            clock: { Int64(time(nil)) }, monotonic: { 0 })
        do {
            try await down.revoke("t", kind: .access, clientID: "com.example.app")
            Issue.record("revocation to nowhere succeeded")
        } catch {
            guard case .unavailable = error else { Issue.record("expected unavailable, got \(error)"); return }
        }
    }
}

final class RecordingObserver: AppleCallObserver {
    private let recorded = Mutex<[String]>([])
    var outcomes: [String] { recorded.withLock { $0 } }
    func appleCall(endpoint: AppleEndpoint, outcome: String, seconds: Double) {
        recorded.withLock { $0.append("\(endpoint.rawValue):\(outcome)") }
    }
}
