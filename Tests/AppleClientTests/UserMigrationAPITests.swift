import AppleSimulator
import Glibc
import HTTPClient
import JOSE
import OpenSSLCrypto
import Synchronization
import Testing
import TestSupport
@testable import AppleClient

/// The client side of `auth/usermigrationinfo` (APPLE.md §8) against the simulator: the team
/// token and its reuse, both directions, and Apple's refusals sorted into `AppleAPIError`.
@Suite struct UserMigrationAPITests {
    static let app = "com.example.app"
    static let sub = "000333.cccccccccccccccccccccccccccccccc.0003"
    static let teamB = "TEAMBBBB02"

    static func api(_ simulator: AppleIDSimulator, team: SimulatorTeam? = nil, clock: HeldClock = HeldClock(), observer: (any AppleCallObserver)? = nil) throws -> AppleAPI {
        let (teamID, keyID, pem) = team.map { ($0.teamID, $0.keyID, $0.developerKeyPEM) } ?? (simulator.teamID, simulator.keyID, simulator.developerKeyPEM)
        return AppleAPI(
            baseURL: simulator.baseURL, http: try HTTPClient(),
            secrets: ClientSecretMinter(teamID: teamID, keyID: keyID, key: try P256PrivateKey(pem: pem)), observer: observer,
            clock: { clock.now }, monotonic: { 0 })
    }

    static func started() throws -> AppleIDSimulator {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        return simulator
    }

    @Test func theTeamTokenIsReusedUntilShortlyBeforeItExpires() async throws {
        let simulator = try Self.started()
        let clock = HeldClock()
        let api = try Self.api(simulator, clock: clock)
        let first = try await api.teamAccessToken(clientID: Self.app)
        #expect(try await api.teamAccessToken(clientID: Self.app) == first)
        clock.advance(by: 3600 - AppleAPI.teamTokenMargin - 1)
        #expect(try await api.teamAccessToken(clientID: Self.app) == first)
        clock.advance(by: 1)
        #expect(try await api.teamAccessToken(clientID: Self.app) != first, "renewed before Apple's hour is up")
        let grants = simulator.calls.filter { $0.endpoint == "token" }
        #expect(grants.count == 2)
        #expect(grants.allSatisfy { $0.parameters["grant_type"] == "client_credentials" && $0.parameters["scope"] == "user.migration" })
        await simulator.stop()
    }

    @Test func aUserCrossesFromTheSendingTeamToTheReceivingOne() async throws {
        let simulator = try Self.started()
        simulator.recordAuthorization(sub: Self.sub, clientID: Self.app, email: "c@privaterelay.appleid.com")
        let observer = RecordingObserver()
        let sender = try Self.api(simulator, observer: observer)
        let transferSub = try await sender.transferSubject(forSub: Self.sub, target: Self.teamB, clientID: Self.app)
        #expect(try await sender.transferSubject(forSub: Self.sub, target: Self.teamB, clientID: Self.app) == transferSub)
        let sent = try #require(simulator.calls.first { $0.endpoint == "usermigrationinfo" })
        #expect(sent.parameters["target"] == Self.teamB)
        #expect(sent.parameters["sub"] == Self.sub)
        #expect(sent.parameters["client_id"] == Self.app)
        let teamToken = try await sender.teamAccessToken(clientID: Self.app)
        #expect(sent.authorization == "Bearer " + teamToken, "the team token, as a Bearer header")
        #expect(observer.outcomes == ["token:ok", "usermigrationinfo:ok", "usermigrationinfo:ok"])

        let moved = try simulator.transfer(clientID: Self.app, toTeam: Self.teamB)
        let receiver = try Self.api(simulator, team: moved.toTeam)
        let user = try await receiver.migratedUser(transferSubject: transferSub, clientID: Self.app)
        #expect(user.sub == simulator.subject(of: Self.sub, inTeam: Self.teamB))
        #expect(user.email?.hasSuffix("@private.icloud.com") == true && user.email != "c@privaterelay.appleid.com")
        #expect(user.isPrivateEmail)
        await simulator.stop()
    }

    @Test func applesRefusalsAreSorted() async throws {
        let simulator = try Self.started()
        simulator.recordAuthorization(sub: Self.sub, clientID: Self.app)
        let api = try Self.api(simulator)
        // Our own team as the target, a user the team does not have, one who revoked.
        await #expect(throws: AppleAPIError.invalidRequest) {
            try await api.transferSubject(forSub: Self.sub, target: simulator.teamID, clientID: Self.app)
        }
        await #expect(throws: AppleAPIError.invalidRequest) {
            try await api.transferSubject(forSub: "000999.99999999999999999999999999999999.9999", target: Self.teamB, clientID: Self.app)
        }
        simulator.revokeConsent(sub: Self.sub, clientID: Self.app)
        await #expect(throws: AppleAPIError.invalidRequest) { try await api.transferSubject(forSub: Self.sub, target: Self.teamB, clientID: Self.app) }
        await #expect(throws: AppleAPIError.invalidRequest) {
            try await api.migratedUser(transferSubject: "123456.00000000000000000000000000000000.0000", clientID: Self.app)
        }
        // Throttling and outages are `unavailable`: the caller slows down and asks again.
        for status in [429, 503] {
            simulator.injectFault(SimulatorFault(endpoint: .userMigrationInfo, status: status))
            do {
                _ = try await api.transferSubject(forSub: Self.sub, target: Self.teamB, clientID: Self.app)
                Issue.record("HTTP \(status) was accepted")
            } catch {
                guard case .unavailable = error else { Issue.record("expected unavailable for \(status), got \(error)"); continue }
            }
        }
        let stranger = AppleAPI(
            baseURL: simulator.baseURL, http: try HTTPClient(),
            secrets: ClientSecretMinter(teamID: simulator.teamID, keyID: simulator.keyID, key: try P256PrivateKey.generate()),
            clock: { Int64(time(nil)) }, monotonic: { 0 })
        await #expect(throws: AppleAPIError.invalidClient) { try await stranger.transferSubject(forSub: Self.sub, target: Self.teamB, clientID: Self.app) }
        await simulator.stop()
    }
}
