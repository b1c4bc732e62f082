import AppleSimulator
import Foundation
import JSON
import Logging
import OpenSSLCrypto
import Store
import Testing
import TestSupport
@testable import SiwaApp

/// Access tokens across instances on PostgreSQL (docs/guides/connecting-your-backend.md, docs/guides/postgresql.md): instances that start together
/// make one signing key and all sign with it, a rotation made by one instance is published and
/// then used by every instance, and one made by the `rotate-signing-key` command is used by
/// every instance from its next re-read.
@Suite(
    .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"),
    .timeLimit(.minutes(2)))
struct AccessTokenInstancesTests {
    typealias Fixture = AccessTokenTests.Fixture
    static let dataKey = [UInt8](repeating: 9, count: 32)

    static func configuration(url: String, simulator: AppleIDSimulator) -> Configuration {
        var configuration = Configuration()
        configuration.listen = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.database = url
        configuration.dataKey = dataKey
        configuration.threads = 2
        configuration.logFormat = .json
        configuration.publicURL = "https://auth.example.com"
        configuration.appleBaseURL = simulator.baseURL
        configuration.sessionIdleTTL = .seconds(60 * 86_400)
        return configuration
    }

    /// Starts `count` instances at the same moment, each on a thread of its own (the start-up
    /// key check blocks), all reading time from `clock`.
    static func startTogether(_ count: Int, url: String, simulator: AppleIDSimulator, clock: HeldClock) async throws -> [Application] {
        let configuration = Self.configuration(url: url, simulator: simulator)
        let instances = try await withThrowingTaskGroup(of: Application.self) { group in
            for _ in 0..<count {
                group.addTask {
                    try await withCheckedThrowingContinuation { continuation in
                        Thread.detachNewThread {
                            continuation.resume(with: Result {
                                let application = try Application(
                                    configuration: configuration, logger: Logger(label: "siwa"), accessLogSink: LogSink(writer: { _ in }),
                                    clocks: clock.clocks)
                                try application.start()
                                return application
                            })
                        }
                    }
                }
            }
            return try await group.reduce(into: [Application]()) { $0.append($1) }
        }
        return instances
    }

    static func send(_ application: Application, _ method: String, _ path: String, bearer: String? = nil) async throws -> AccessTokenTests.Reply {
        try await AccessTokenTests.send(application, method, path, headers: bearer.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    static func kids(_ application: Application) async throws -> [String] {
        let reply = try await send(application, "GET", "/.well-known/jwks.json")
        return try #require(reply.json?["keys"]?.array).compactMap { $0.object?["kid"]?.string }
    }

    static func tokenKid(_ application: Application, session: String) async throws -> String? {
        let reply = try await send(application, "POST", "/api/token", bearer: session)
        #expect(reply.status == 200, "\(reply.body)")
        return try AccessTokenTests.decode(try #require(reply.json?["access_token"]?.string)).header["kid"]?.string
    }

    @Test func instancesStartingTogetherShareOneKeyAndFollowEachOthersRotations() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        // Three applications, one test: one slot (AppSlots).
        try await AppSlots.withSlot { try await withFixture(AppleIDSimulator(configuration: .testing())) { simulator in
            try simulator.start()
            let start = Int64(Date().timeIntervalSince1970)
            let clock = HeldClock(start)
            let instances = try await Self.startTogether(3, url: url, simulator: simulator, clock: clock)
            let (a, b, c) = (instances[0], instances[1], instances[2])

            // One key, in every instance's JWKS.
            let first = try await Self.kids(a)
            #expect(first.count == 1)
            #expect(try await Self.kids(b) == first)
            #expect(try await Self.kids(c) == first)
            let rows = try await a.store.signingKeys.published(now: start)
            #expect(rows.count == 1)

            // A session made on one instance gets tokens from every instance, all with that key.
            let signedIn = try await a.store.completeSignIn(
                SignInWrite(identity: VerifiedIdentity(appleSub: "000910.00000000000000000000000000000910.0910"),
                            tokenHash: SHA256.hash("pg-token"), tokenExpiresAt: start + 600, sessionTTL: 86_400 * 90),
                now: start)
            let session = signedIn.session.token
            for instance in instances { #expect(try await Self.tokenKid(instance, session: session) == first[0]) }

            // The rotation falls due: every instance checks at once, and one key is made.
            clock.advance(by: 30 * 86_400)
            await withTaskGroup(of: Void.self) { group in
                for instance in instances { group.addTask { await instance.accessTokenKeys.maintain() } }
            }
            let rotated = try await a.store.signingKeys.published(now: clock.now)
            #expect(rotated.count == 2, "\(rotated.map(\.kid))")
            let second = try #require(rotated.last?.kid)
            for instance in instances { #expect(try await Self.kids(instance) == first + [second]) }
            // Every instance keeps signing with the old key until the new one has been out long enough.
            for instance in instances { #expect(try await Self.tokenKid(instance, session: session) == first[0]) }
            clock.advance(by: AccessTokenKeys.publicationLead)
            for instance in instances { #expect(try await Self.tokenKid(instance, session: session) == second) }

            // The command, run against the database while the instances serve: each instance signs
            // with the new key from its next re-read (docs/guides/connecting-your-backend.md), the keys it replaced still published.
            let command = try SigningKeyRotation.rotate(
                configuration: Self.configuration(url: url, simulator: simulator), logger: Logger(label: "test"), now: clock.now)
            #expect(command.signsFrom == clock.now)
            for instance in instances { try await instance.accessTokenKeys.refresh() }
            for instance in instances { #expect(try await Self.kids(instance) == first + [second, command.kid]) }
            for instance in instances { #expect(try await Self.tokenKid(instance, session: session) == command.kid) }

            // A session ended on one instance gets no token from another, once told (docs/guides/postgresql.md's
            // second is a latency; the mechanism is what a loaded machine can test).
            #expect(try await Self.send(c, "POST", "/api/logout", bearer: session).status == 204)
            let refused = try await eventually { try await Self.send(a, "POST", "/api/token", bearer: session).status == 401 }
            #expect(refused, "ended on C, refused on A")

            for instance in instances { await instance.stop() }
        } }
    }
}
