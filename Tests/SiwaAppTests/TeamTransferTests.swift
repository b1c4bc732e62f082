import AppleSimulator
import Foundation
import JSON
import OpenSSLCrypto
import Store
import Synchronization
import Testing
import TestSupport
@testable import SiwaApp

/// docs/guides/team-transfer.md in process, where one held clock drives the simulator, the receiving team's server
/// and the commands, so Apple's 60-day window can pass in a test: export, the transfer, import,
/// sign-ins during and after the window, the status, and how a run copes with Apple refusing,
/// failing, or the person pressing Ctrl-C. The real binary's rehearsal is in SiwaServerTests.
@Suite(.timeLimit(.minutes(2)))
struct TeamTransferTests {
    static let app = "com.example.app"
    static let teamB = "TEAMBBBB01"
    static let dataKey = [UInt8](repeating: 9, count: 32)

    /// What the commands wrote to stderr.
    final class ConsoleLines: Sendable {
        private let text = Mutex("")
        func append(_ line: String) { text.withLock { $0 += line } }
        var lines: [String] { text.withLock { $0.split(separator: "\n").map(String.init) } }
    }

    /// The simulator on the held clock, team A's database, and the ways to drive both teams.
    final class Fixture: Stoppable {
        let clock = HeldClock()
        let simulator: AppleIDSimulator
        let folder: String
        let console = ConsoleLines()
        var users: [(id: String, sub: String)] = []

        init() throws {
            var configuration = SimulatorConfiguration.testing()
            let clock = self.clock
            configuration.clock = { clock.now }
            simulator = try AppleIDSimulator(configuration: configuration)
            try simulator.start()
            folder = NSTemporaryDirectory() + "siwa-transfer-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }

        var databaseA: String { folder + "/a.sqlite3" }
        var csv: String { folder + "/transfer.csv" }

        func configuration(_ team: SimulatorTeam, database: String) -> Configuration {
            var configuration = Configuration()
            configuration.database = database
            configuration.dataKey = TeamTransferTests.dataKey
            configuration.clientIDs = [TeamTransferTests.app]
            configuration.appleBaseURL = simulator.baseURL
            configuration.teamID = team.teamID
            configuration.keyID = team.keyID
            configuration.privateKeyPEM = team.developerKeyPEM
            return configuration
        }

        var teamA: SimulatorTeam { get throws { try simulator.team(simulator.teamID) } }

        /// `count` users who signed in to team A's server (and so to the app at Apple), even
        /// ones with Hide My Email.
        func seed(_ count: Int) async throws {
            let store = try Store.open(databaseA, connections: 2) { TeamTransferTests.dataKey }
            defer { store.close() }
            for index in 0..<count {
                let sub = String(format: "000%03d.%032x.%04d", index % 1000, index, index)
                let email = index.isMultiple(of: 2) ? "u\(index)@privaterelay.appleid.com" : "u\(index)@example.com"
                simulator.recordAuthorization(sub: sub, clientID: TeamTransferTests.app, email: email)
                var write = SignInWrite(
                    identity: VerifiedIdentity(appleSub: sub, email: email, emailVerified: true, isPrivateEmail: index.isMultiple(of: 2)),
                    tokenHash: SHA256.hash("seed-\(index)"), tokenExpiresAt: clock.now + 600, sessionTTL: 86_400)
                write.appleTokens = AppleTokenGrant(clientID: TeamTransferTests.app, refreshToken: "r-\(index)", accessToken: nil)
                users.append((try await store.completeSignIn(write, now: clock.now).user.id, sub))
            }
        }

        /// The commands on the held clock: a pause advances its monotonic time instead of
        /// waiting, so a test of Apple failing takes no time; no outcome depends on its length.
        func transfer(_ configuration: Configuration, stopRequested: @escaping @Sendable () -> Bool = { false }) throws -> TeamTransfer {
            let console = self.console
            return try TeamTransfer(
                configuration: configuration,
                console: TransferConsole(isTerminal: false, monotonic: Clocks.system.monotonic) { console.append($0) },
                clocks: clock.heldClocks, stopRequested: stopRequested, sleep: { [clock] in clock.advanceMonotonic(by: $0) },
                pacing: { TransferPacing(rate: Double($0), firstBackoff: 0.01, maximumBackoff: 0.04, maximumTries: 4) })
        }

        func export(rate: Int = 1000) async throws -> TransferSummary {
            let transfer = try transfer(configuration(try teamA, database: databaseA))
            defer { transfer.close() }
            return try await transfer.export(target: TeamTransferTests.teamB, clientID: nil, destination: .file(csv), rate: rate, dryRun: false)
        }

        func migrationCalls() -> [SimulatorCall] { simulator.calls.filter { $0.endpoint == "usermigrationinfo" } }

        func stop() async {
            await simulator.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// A native sign-in as the phone makes it now: `(status, created, user id)`.
    static func signIn(_ harness: TestApp, _ simulator: AppleIDSimulator, sub: String) async throws -> (Int, Bool?, String?) {
        let token = try simulator.issueCode(sub: sub, clientID: app, nonce: "n").identityToken
        let body = JSONWriter.string(.object(JSONObject([("identity_token", .string(token)), ("nonce", .string("n"))])))
        let reply = try await HTTPGet.raw(
            port: harness.application.port,
            "POST /api/auth/apple HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let status = Int(reply.split(separator: " ").dropFirst().first ?? "") ?? 0
        let json = try? JSONParser.parse(reply.components(separatedBy: "\r\n\r\n").dropFirst().joined()).object
        return (status, json?["created"]?.bool, json?["user"]?.object?["id"]?.string)
    }

    @Test(arguments: DatabaseEngine.available)
    func theReceivingTeamImportsAndPeopleLandInTheirAccountsUntilTheWindowCloses(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture()) { fixture in try await Self.rehearse(fixture, engine: engine) }
    }

    static func rehearse(_ fixture: Fixture, engine: DatabaseEngine) async throws {
        try await fixture.seed(12)
        let users = fixture.users
        // User 11 revoked the app before the move: Apple refuses them to the sender.
        fixture.simulator.revokeConsent(sub: users[11].sub, clientID: Self.app)

        let exported = try await fixture.export()
        #expect(exported.done == 11 && exported.failed == 1 && exported.exitCode == 1)
        #expect(fixture.console.lines.contains { $0.contains("user \(users[11].id)") && $0.contains("invalid_request") })
        let csv = try String(contentsOfFile: fixture.csv, encoding: .utf8)
        #expect(csv.split(separator: "\n").count == 12)
        #expect(csv.hasPrefix("user_id,external_id,transfer_sub\n"))
        for user in users {
            #expect(!csv.contains(user.sub), "never a sub in the CSV")
        }
        #expect(!csv.contains("@"), "never an email in the CSV")

        let moved = try fixture.simulator.transfer(clientID: Self.app, toTeam: Self.teamB)
        // Team B's server runs on a copy of the database, with B's configuration.
        let databaseB: String
        switch engine {
        case .sqlite:
            databaseB = fixture.folder + "/b.sqlite3"
            try FileManager.default.copyItem(atPath: fixture.databaseA, toPath: databaseB)
        case .postgres:
            databaseB = try await PostgresCluster.shared().makeDatabase()
            _ = try Store.copy(fromSQLite: fixture.databaseA, toPostgres: databaseB)
        }
        let configurationB = fixture.configuration(moved.toTeam, database: databaseB)
        try await withApp(transport: .socket, clock: fixture.clock, configure: { configuration in
            configuration.database = configurationB.database
            configuration.dataKey = configurationB.dataKey
            configuration.clientIDs = configurationB.clientIDs
            configuration.appleBaseURL = configurationB.appleBaseURL
            configuration.teamID = configurationB.teamID
            configuration.keyID = configurationB.keyID
            configuration.privateKeyPEM = configurationB.privateKeyPEM
        }) { harness in
            do {
                _ = try await harness.waitUntilReady()
                try await Self.receive(fixture, harness: harness, configurationB: configurationB)
            } catch {
                await harness.stop()
                throw error
            }
        }
    }

    static func receive(_ fixture: Fixture, harness: TestApp, configurationB: Configuration) async throws {
        let users = fixture.users

        // User 0 comes back before the import: found by transfer_sub, moved, signed in.
        let early = try await Self.signIn(harness, fixture.simulator, sub: users[0].sub)
        #expect(early.0 == 200 && early.1 == false && early.2 == users[0].id)
        // User 10 revokes the app at team B before the import reaches them.
        let tenInB = try #require(fixture.simulator.subject(of: users[10].sub, inTeam: Self.teamB))
        fixture.simulator.revokeConsent(sub: tenInB, clientID: Self.app)

        let transferB = try fixture.transfer(configurationB)
        defer { transferB.close() }
        let imported = try await transferB.importFile(fixture.csv, clientID: nil, rate: 1000)
        #expect(imported == TransferSummary(done: 9, skipped: 1, failed: 1))
        #expect(fixture.console.lines.contains { $0.contains("user \(users[10].id)") && $0.contains("invalid_request") })
        let two = try #require(try await transferB.store.users.user(id: users[2].id))
        #expect(two.appleSub == fixture.simulator.subject(of: users[2].sub, inTeam: Self.teamB))
        // Team B's relay address, at the new relay domain: relay because Apple says so.
        #expect(two.email != "u2@privaterelay.appleid.com" && two.email?.hasSuffix("@private.icloud.com") == true, "team B's relay address")
        #expect(two.isPrivateEmail && two.emailForwarding == .enabled)
        #expect(try await transferB.store.users.user(id: users[3].id)?.email == "u3@example.com")
        #expect(try await transferB.store.vault.load(userID: users[3].id) == nil, "team A's Apple tokens are gone")
        for index in 1...9 {
            let back = try await Self.signIn(harness, fixture.simulator, sub: users[index].sub)
            #expect(back.0 == 200 && back.1 == false && back.2 == users[index].id, "user \(index) lands in their account")
        }
        let during = try await TeamTransfer.status(of: transferB.store, now: fixture.clock.now)
        #expect(during.contains("imported  10") && during.contains("pending   0") && during.contains("failed    2"), "\(during)")
        #expect(during.contains("60 days left"), "\(during)")

        // Past the window: no transfer_sub any more, so those not carried across are new users.
        fixture.clock.advance(by: 61 * 86_400)
        let late = try await Self.signIn(harness, fixture.simulator, sub: users[11].sub)
        #expect(late.0 == 200 && late.1 == true && late.2 != users[11].id)
        let after = try await TeamTransfer.status(of: transferB.store, now: fixture.clock.now)
        #expect(after.contains("window closed") && after.contains("2 users were left behind"), "\(after)")
        let again = try await Self.signIn(harness, fixture.simulator, sub: users[1].sub)
        #expect(again.1 == false && again.2 == users[1].id, "the imported stay imported")
    }

    /// Password accounts have no Apple ID, so Apple has nothing to transfer for them (docs/guides/team-transfer.md):
    /// the export skips and counts them instead of stopping at the first one, and writes only
    /// the Apple users, an Apple user who also set a password among them.
    @Test func usersWithoutAnAppleIDAreSkippedAndCounted() async throws {
        try await withFixture(Fixture()) { fixture in
            try await fixture.seed(3)
            let store = try Store.open(fixture.databaseA, connections: 2) { TeamTransferTests.dataKey }
            var passwordOnly: [String] = []
            for index in 0..<2 {
                let verification = EmailCode(
                    kind: .verifyEmail, code: "v-\(index)", codeHash: SHA256.hash("v-\(index)"), expiresAt: fixture.clock.now + 86_400)
                let signUp = PasswordSignUp(email: "p\(index)@example.com", hash: "$scrypt$h\(index)", sessionTTL: 86_400, verification: verification)
                passwordOnly.append(try await store.createPasswordUser(signUp, now: fixture.clock.now).user.id)
            }
            // User 1 (u1@example.com) sets a first password: an Apple user with a password too.
            let both = fixture.users[1].id
            _ = try await store.setPassword(
                userID: both, checkedHash: nil, newHash: "$scrypt$h-both", keptSessionID: "none", attempts: nil, now: fixture.clock.now)
            #expect(try await store.passwordCredential(userID: both) != nil)
            store.close()

            let summary = try await fixture.export()
            #expect(summary == TransferSummary(done: 3, skipped: 2, failed: 0))
            #expect(summary.exitCode == 0 && summary.stop == nil)
            #expect(fixture.console.lines.last?.contains("3 exported, 2 skipped, 0 failed (of 5 users, 2 without an Apple ID)") == true,
                    "\(fixture.console.lines)")
            #expect(Set(fixture.migrationCalls().compactMap { $0.parameters["sub"] }) == Set(fixture.users.map(\.sub)))
            #expect(fixture.migrationCalls().count == 3, "Apple is asked about the Apple users only")
            let rows = try String(contentsOfFile: fixture.csv, encoding: .utf8).split(separator: "\n").dropFirst()
            #expect(rows.map { String($0.prefix { $0 != "," }) }.sorted() == fixture.users.map(\.id).sorted(), "only the Apple users")
            for id in passwordOnly { #expect(!rows.contains { $0.hasPrefix(id) }) }

            let transfer = try fixture.transfer(fixture.configuration(try fixture.teamA, database: fixture.databaseA))
            defer { transfer.close() }
            let status = try await TeamTransfer.status(of: transfer.store, now: fixture.clock.now)
            #expect(status.contains("users     5") && status.contains("exported  3") && status.contains("pending   0"), "\(status)")
            #expect(status.contains("skipped   2 without an Apple ID"), "\(status)")
            #expect(try await transfer.store.users.user(id: passwordOnly[0])?.appleSub == nil, "nothing changed for them")

            // Run again: everyone is skipped, nobody asked about.
            fixture.simulator.clearCalls()
            let again = try await transfer.export(target: Self.teamB, clientID: nil, destination: .file(fixture.csv), rate: 1000, dryRun: false)
            #expect(again == TransferSummary(done: 0, skipped: 5, failed: 0))
            #expect(fixture.migrationCalls().isEmpty)
            _ = try await transfer.export(target: "TEAMCCCC01", clientID: nil, destination: .file(fixture.csv), rate: 1000, dryRun: true)
            #expect(fixture.console.lines.last?.contains("5 users, 0 already exported for TEAMCCCC01, 2 without an Apple ID (skipped), 3 to ask Apple about") == true)
        }
    }

    /// docs/guides/team-transfer.md: an external id a spreadsheet would run as a formula is written with a leading
    /// `'`, and the import reads the file the export wrote back to the values in the database.
    @Test func formulaLikeExternalIDsAreDefusedInTheFileAndReadBackExactly() async throws {
        try await withFixture(Fixture()) { fixture in
            try await fixture.seed(3)
            let store = try Store.open(fixture.databaseA, connections: 2) { TeamTransferTests.dataKey }
            let externalIDs = [#"=HYPERLINK("http://evil.example","x")"#, "-1", "crm-3"]
            for (user, externalID) in zip(fixture.users, externalIDs) {
                _ = try await store.setExternalID(userID: user.id, externalID: externalID, now: fixture.clock.now)
            }
            store.close()
            #expect(try await fixture.export() == TransferSummary(done: 3, skipped: 0, failed: 0))

            let text = try String(contentsOfFile: fixture.csv, encoding: .utf8)
            #expect(text.contains(#","'=HYPERLINK(""http://evil.example"",""x"")","#), "\(text)")
            #expect(text.contains(",'-1,") && text.contains(",crm-3,"), "\(text)")
            let cells = text.split(separator: "\n").dropFirst().flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            #expect(!cells.contains { $0.first.map { "=+-@".contains($0) } ?? false }, "no cell starts a formula")

            let transfer = try fixture.transfer(fixture.configuration(try fixture.teamA, database: fixture.databaseA))
            defer { transfer.close() }
            let stored = try await transfer.store.transfers.exported(target: Self.teamB)
            #expect(Set(stored.compactMap(\.externalID)) == Set(externalIDs))
            #expect(try TransferCSV.parse(Array(text.utf8)) == stored, "the import reads what the database holds")
        }
    }

    @Test func appleStayingDownStopsTheRunAndTheNextRunFinishesIt() async throws {
        try await withFixture(Fixture()) { fixture in
            try await fixture.seed(10)
            fixture.simulator.injectFault(SimulatorFault(endpoint: .userMigrationInfo, status: 503, count: 100, after: 3))
            let stopped = try await fixture.export()
            #expect(stopped.done == 3 && stopped.failed == 0)
            #expect(stopped.stop == .appleUnavailable("HTTP 503"))
            #expect(stopped.exitCode == 1)
            #expect(fixture.console.lines.contains { $0.contains("Apple is unavailable (HTTP 503) after 4 tries") })
            #expect(fixture.migrationCalls().count == 3 + 4)
            #expect(try String(contentsOfFile: fixture.csv, encoding: .utf8).split(separator: "\n").count == 4, "what is done is written")

            let firstCalls = fixture.migrationCalls()
            let stuck = try #require(firstCalls.last?.parameters["sub"])
            let done = Set(firstCalls.compactMap { $0.parameters["sub"] }).subtracting([stuck])
            #expect(done.count == 3)
            fixture.simulator.clearFaults()
            fixture.simulator.clearCalls()
            let finished = try await fixture.export()
            #expect(finished == TransferSummary(done: 7, skipped: 3, failed: 0))
            let rest = fixture.migrationCalls().compactMap { $0.parameters["sub"] }
            #expect(rest.count == 7 && Set(rest) == Set(fixture.users.map(\.sub)).subtracting(done), "only the rest, each once")
            #expect(try String(contentsOfFile: fixture.csv, encoding: .utf8).split(separator: "\n").count == 11)
        }
    }

    @Test func aStopRequestEndsTheRunAfterTheCurrentUser() async throws {
        try await withFixture(Fixture()) { fixture in
            try await fixture.seed(8)
            let simulator = fixture.simulator
            let transfer = try fixture.transfer(fixture.configuration(try fixture.teamA, database: fixture.databaseA)) {
                simulator.calls.filter { $0.endpoint == "usermigrationinfo" }.count >= 3
            }
            defer { transfer.close() }
            let summary = try await transfer.export(target: Self.teamB, clientID: nil, destination: .file(fixture.csv), rate: 1000, dryRun: false)
            #expect(summary.stop == .interrupted && summary.done == 3 && summary.exitCode == 130)
            #expect(fixture.console.lines.last?.contains("run the same command again to continue") == true)
            #expect(try String(contentsOfFile: fixture.csv, encoding: .utf8).split(separator: "\n").count == 4)
            let status = try await TeamTransfer.status(of: transfer.store, now: fixture.clock.now)
            #expect(status.contains("exported  3") && status.contains("pending   5") && status.contains("not started"), "\(status)")
        }
    }

    @Test func applesRefusingOurClientIsAConfigurationErrorAndRecordsNothing() async throws {
        try await withFixture(Fixture()) { fixture in
            try await fixture.seed(3)
            // Team B's credentials before the app is B's: Apple answers invalid_client.
            let transfer = try fixture.transfer(fixture.configuration(try fixture.simulator.team(Self.teamB), database: fixture.databaseA))
            defer { transfer.close() }
            let summary = try await transfer.export(target: "TEAMCCCC01", clientID: nil, destination: .file(fixture.csv), rate: 1000, dryRun: false)
            #expect(summary.stop == .clientRefused && summary.exitCode == 2 && summary.done == 0)
            #expect(fixture.console.lines.contains { $0.contains("invalid_client") && $0.contains("team_id, key_id, private_key") })
            #expect(try await transfer.store.transfers.status().exported == 0)

            // The target must be another team, and a team ID at all.
            await #expect(throws: ConfigurationError.self) {
                try await transfer.export(target: Self.teamB, clientID: nil, destination: .file(fixture.csv), rate: 10, dryRun: false)
            }
            await #expect(throws: ConfigurationError.self) {
                try await transfer.export(target: "not-a-team", clientID: nil, destination: .file(fixture.csv), rate: 10, dryRun: false)
            }
            // Importing on the sender's own database, with the sender's team, is refused before
            // anything changes.
            let teamA = try fixture.transfer(fixture.configuration(try fixture.teamA, database: fixture.databaseA))
            defer { teamA.close() }
            _ = try await teamA.export(target: Self.teamB, clientID: nil, destination: .file(fixture.csv), rate: 1000, dryRun: false)
            let wrongSide = await #expect(throws: ConfigurationError.self) {
                try await teamA.importFile(fixture.csv, clientID: nil, rate: 1000)
            }
            #expect(wrongSide?.key == "team_id" && wrongSide?.problem.contains("exported for \(Self.teamB)") == true)
            #expect(try await teamA.store.vault.load(userID: fixture.users[0].id) != nil, "nothing dropped")
            #expect(try await teamA.store.transfers.status().windowStartedAt == nil)
            // A dry run counts and calls nothing.
            fixture.simulator.clearCalls()
            let dry = try await transfer.export(target: "TEAMCCCC01", clientID: nil, destination: .file(fixture.csv), rate: 10, dryRun: true)
            #expect(dry.done == 0 && dry.exitCode == 0)
            #expect(fixture.simulator.calls.isEmpty)
            #expect(fixture.console.lines.last?.contains("3 users, 0 already exported for TEAMCCCC01, 0 without an Apple ID") == true)
        }
    }
}

extension TransferSummary {
    init(done: Int, skipped: Int, failed: Int) {
        self.init()
        self.done = done
        self.skipped = skipped
        self.failed = failed
    }
}
