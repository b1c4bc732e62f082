import AppleSimulator
import Foundation
import JSON
import SQLite
import Testing
import TestSupport

/// Issue 12's rehearsal with the real binary on SQLite: team A's server with 1,000 users,
/// `transfer export` interrupted half-way with SIGINT and resumed (every user exported once,
/// counted at the simulator), the simulator's transfer, team B's server on a copy of the
/// database with B's configuration, a user signing in before the import reaches them,
/// `transfer import`, then everyone landing in their old account. Apple's 60 days passing
/// needs a clock the binary does not have: that part runs in process (`TeamTransferTests`).
@Suite(.timeLimit(.minutes(3)))
struct TeamTransferRehearsalTests {
    static let app = "com.example.app"
    static let teamB = "TEAMBBBB01"
    /// Handed over with the database (it seals what the database holds); both teams use it.
    static let dataKey = Data((0..<32).map { UInt8($0 * 5 % 256) }).base64EncodedString()

    struct SeededUser {
        let id: String
        let sub: String
    }

    /// Team A's settings: the simulator's configured team.
    static func environmentA(_ simulator: AppleIDSimulator, database: String, _ extra: [String: String] = [:]) -> [String: String] {
        ServerProcess.environment(simulator: simulator, database: database, ["SIWA_DATA_KEY": dataKey].merging(extra) { $1 })
    }

    /// Team B's: its own team ID and key, the same app.
    static func environmentB(_ simulator: AppleIDSimulator, team: SimulatorTeam, database: String) -> [String: String] {
        environmentA(simulator, database: database, [
            "SIWA_TEAM_ID": team.teamID, "SIWA_KEY_ID": team.keyID, "SIWA_PRIVATE_KEY": team.developerKeyPEM,
        ])
    }

    /// `count` users in team A's database, written in one transaction after the binary migrated
    /// it (a thousand HTTP sign-ins would be slow and test nothing more), each one known to the
    /// simulator as having authorized the app; every third hides their email, every fifth has
    /// an external id.
    static func seed(_ count: Int, database: String, simulator: AppleIDSimulator, folder: String) async throws -> [SeededUser] {
        let migrated = try await ServerProcess.run(["migrate"], environment: environmentA(simulator, database: database), folder: folder)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        var users: [SeededUser] = []
        for index in 0..<count {
            users.append(SeededUser(id: String(format: "usr_seed%05d", index), sub: String(format: "000%03d.%032x.%04d", index % 1000, index + 1, index % 10_000)))
        }
        let now = Int64(Date().timeIntervalSince1970)
        let db = try Database(path: database)
        defer { db.close() }
        try db.writeAndWait { connection in
            for (index, user) in users.enumerated() {
                let hidden = index % 3 == 0
                let email = hidden ? "u\(index)@privaterelay.appleid.com" : "u\(index)@example.com"
                try connection.run(
                    """
                    INSERT INTO users(id, apple_sub, email, email_verified, is_private_email, email_forwarding, external_id, created_at, updated_at)
                    VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)
                    """,
                    [
                        .text(user.id), .text(user.sub), .text(email), .integer(hidden ? 1 : 0), hidden ? .text("enabled") : .null,
                        index % 5 == 0 ? .text("crm-\(index)") : .null, .integer(now), .integer(now),
                    ])
            }
        }
        for (index, user) in users.enumerated() {
            let hidden = index % 3 == 0
            simulator.recordAuthorization(sub: user.sub, clientID: app, email: hidden ? "u\(index)@privaterelay.appleid.com" : "u\(index)@example.com")
        }
        return users
    }

    /// The sender's calls at the simulator, by the `sub` they named.
    static func exportCalls(_ simulator: AppleIDSimulator) -> [String: Int] {
        var counts: [String: Int] = [:]
        for call in simulator.calls where call.endpoint == "usermigrationinfo" {
            if let sub = call.parameters["sub"] { counts[sub, default: 0] += 1 }
        }
        return counts
    }

    /// A native sign-in as a phone makes it today: status, `created`, user id.
    static func signIn(port: UInt16, simulator: AppleIDSimulator, sub: String) async throws -> (status: Int, created: Bool?, id: String?) {
        let (status, json) = try await ServerProcess.signIn(port: port, simulator: simulator, sub: sub, nonce: "n-\(sub.prefix(6))")
        return (status, json?["created"]?.bool, json?["user"]?.object?["id"]?.string)
    }

    @Test func aThousandUsersMoveToTeamBAndLandInTheirOldAccounts() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let databaseA = folder + "/a.sqlite3"
        let csv = folder + "/transfer.csv"
        let users = try await Self.seed(1000, database: databaseA, simulator: simulator, folder: folder)
        let environmentA = Self.environmentA(simulator, database: databaseA)

        // Team A exports, and is interrupted half-way: Apple holds the 501st user's call until
        // the command has taken the Ctrl-C (it says so), so the signal lands while that call is
        // in flight however slowly either process runs.
        let hold = SimulatorHold()
        defer { hold.open() }
        simulator.injectFault(SimulatorFault(endpoint: .userMigrationInfo, count: 1, after: 500, hold: hold))
        let first = try ServerProcess(["transfer", "export", "--target", Self.teamB, "--out", csv, "--rate", "1000"], environment: environmentA, folder: folder)
        #expect(try await eventually(within: .seconds(60)) { hold.holding == 1 || !first.isRunning }, "\(first.stderrText)")
        #expect(Self.exportCalls(simulator).count == 501)
        first.signal(SIGINT)
        #expect(try await eventually { first.stderrText.contains("stopping after the current user") || !first.isRunning }, "\(first.stderrText)")
        hold.open()
        #expect(await first.wait(seconds: 60) == 130, "\(first.stderrText)")
        #expect(first.stderrText.contains("interrupted; what is done is kept"), "\(first.stderrText)")
        // Stopped after the current user: the slow one was finished and kept, nobody after it.
        let before = Self.exportCalls(simulator).count
        #expect(before == 501)
        #expect(try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").count == before + 1, "the CSV of what is done")

        // The same command again continues where it stopped.
        let second = try await ServerProcess.run(["transfer", "export", "--target", Self.teamB, "--out", csv, "--rate", "1000"], environment: environmentA, folder: folder)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("\(1000 - before) exported, \(before) skipped, 0 failed (of 1000 users)"), "\(second.stderr)")
        let calls = Self.exportCalls(simulator)
        #expect(Set(calls.keys) == Set(users.map(\.sub)))
        #expect(calls.values.allSatisfy { $0 == 1 }, "every user exported exactly once")
        #expect(simulator.calls.filter { $0.endpoint == "usermigrationinfo" }.allSatisfy { $0.parameters["target"] == Self.teamB })
        let exported = try String(contentsOfFile: csv, encoding: .utf8)
        let lines = exported.split(separator: "\n")
        #expect(lines.first == "user_id,external_id,transfer_sub")
        #expect(lines.count == 1001)
        #expect(lines.contains("usr_seed00005,crm-5,\(lines.first { $0.hasPrefix("usr_seed00005,") }?.split(separator: ",").last ?? "")"))
        #expect(!exported.contains("@") && !users.contains { exported.contains($0.sub) }, "no email, no sub")
        let statusA = try await ServerProcess.run(["transfer", "status"], environment: environmentA, folder: folder)
        #expect(statusA.stdout.contains("exported  1000") && statusA.stdout.contains("pending   0"), "\(statusA.stdout)")

        // Apple moves the app; team B gets a copy of the database and runs with its own keys.
        let moved = try simulator.transfer(clientID: Self.app, toTeam: Self.teamB)
        #expect(moved.users == 1000)
        let databaseB = folder + "/b.sqlite3"
        try FileManager.default.copyItem(atPath: databaseA, toPath: databaseB)
        let environmentB = Self.environmentB(simulator, team: moved.toTeam, database: databaseB)
        let server = try ServerProcess(["serve"], environment: environmentB, folder: folder)
        let port = try #require(await server.waitForPort())
        try await ServerProcess.waitUntilReady(port: port)

        // Someone signs in before the import reaches them: their token carries transfer_sub.
        let early = try await Self.signIn(port: port, simulator: simulator, sub: users[777].sub)
        #expect(early.status == 200 && early.created == false && early.id == users[777].id)

        let imported = try await ServerProcess.run(["transfer", "import", csv, "--rate", "1000"], environment: environmentB, folder: folder)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("999 imported, 1 skipped, 0 failed"), "\(imported.stderr)")
        #expect(imported.stderr.contains("60 days left"), "\(imported.stderr)")
        #expect(simulator.calls.filter { $0.endpoint == "usermigrationinfo" && $0.parameters["transfer_sub"] != nil }.count == 999)

        for index in [0, 1, 2, 499, 998, 999] {
            let back = try await Self.signIn(port: port, simulator: simulator, sub: users[index].sub)
            #expect(back.status == 200 && back.created == false && back.id == users[index].id, "user \(index) lands in their account")
        }
        let statusB = try await ServerProcess.run(["transfer", "status"], environment: environmentB, folder: folder)
        #expect(statusB.stdout.contains("imported  1000") && statusB.stdout.contains("pending   0") && statusB.stdout.contains("failed    0"), "\(statusB.stdout)")

        server.signal(SIGTERM)
        #expect(await server.wait(seconds: 30) == 0)
        await simulator.stop()
    }

    @Test func appleFailingMidExportSlowsAndRetriesAndLosesNothing() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/a.sqlite3"
        let users = try await Self.seed(60, database: database, simulator: simulator, folder: folder)
        simulator.injectFault(SimulatorFault(endpoint: .userMigrationInfo, status: 503, count: 2, after: 10))
        simulator.injectFault(SimulatorFault(endpoint: .userMigrationInfo, status: 429, count: 2, after: 10))
        simulator.injectFault(SimulatorFault(endpoint: .userMigrationInfo, status: 502, count: 1, after: 10, body: .garbage))

        let run = try await ServerProcess.run(
            ["transfer", "export", "--target", Self.teamB, "--out", folder + "/t.csv", "--rate", "1000"],
            environment: Self.environmentA(simulator, database: database), folder: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("60 exported, 0 skipped, 0 failed"), "\(run.stderr)")
        let calls = Self.exportCalls(simulator)
        #expect(Set(calls.keys) == Set(users.map(\.sub)), "nobody lost")
        let callCount: Int = calls.values.reduce(0, +)
        #expect(callCount == 65, "each of the 60 asked once, and each of the 5 failures again")
        // The retries waited: the pause doubles from 0.2 s, so each episode took at least 0.6 s.
        let times = simulator.calls.filter { $0.endpoint == "usermigrationinfo" }.map(\.time)
        #expect((times.last ?? 0) - (times.first ?? 0) >= 1)
        #expect(try String(contentsOfFile: folder + "/t.csv", encoding: .utf8).split(separator: "\n").count == 61)
        await simulator.stop()
    }

    @Test func mistakesEndWithAClearLineAndTheRightExitCode() async throws {
        let simulator = try AppleIDSimulator(configuration: .testing())
        try simulator.start()
        let folder = ServerProcess.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/a.sqlite3"
        _ = try await Self.seed(3, database: database, simulator: simulator, folder: folder)
        let environment = Self.environmentA(simulator, database: database)

        var noTeam = environment
        noTeam["SIWA_TEAM_ID"] = nil
        let missing = try await ServerProcess.run(["transfer", "export", "--target", Self.teamB], environment: noTeam, folder: folder)
        #expect(missing.status == 2 && missing.stderr.contains("team_id"), "\(missing.stderr)")
        let ownTeam = try await ServerProcess.run(["transfer", "export", "--target", simulator.teamID], environment: environment, folder: folder)
        #expect(ownTeam.status == 2 && ownTeam.stderr.contains("--target"), "\(ownTeam.stderr)")
        let rate = try await ServerProcess.run(["transfer", "export", "--target", Self.teamB, "--rate", "0"], environment: environment, folder: folder)
        #expect(rate.status != 0 && rate.stderr.contains("--rate"), "\(rate.stderr)")

        try "user_id,sub,email\nusr_1,000123.x.0123,a@b.c\n".write(toFile: folder + "/bad.csv", atomically: true, encoding: .utf8)
        let bad = try await ServerProcess.run(["transfer", "import", folder + "/bad.csv"], environment: environment, folder: folder)
        #expect(bad.status == 2, "\(bad.stderr)")
        #expect(bad.stderr.contains("line 1: the header must be user_id,external_id,transfer_sub; nothing was changed"), "\(bad.stderr)")
        let absent = try await ServerProcess.run(["transfer", "import", folder + "/none.csv"], environment: environment, folder: folder)
        #expect(absent.status == 2 && absent.stderr.contains("cannot be read"), "\(absent.stderr)")
        let status = try await ServerProcess.run(["transfer", "status"], environment: environment, folder: folder)
        #expect(status.status == 0)
        #expect(status.stdout.contains("users     3") && status.stdout.contains("window    not started"), "nothing changed: \(status.stdout)")

        // To stdout without --out, with the summary on stderr only.
        let toStdout = try await ServerProcess.run(["transfer", "export", "--target", Self.teamB], environment: environment, folder: folder)
        #expect(toStdout.status == 0, "\(toStdout.stderr)")
        #expect(toStdout.stdout.hasPrefix("user_id,external_id,transfer_sub\n") && toStdout.stdout.split(separator: "\n").count == 4, "\(toStdout.stdout)")
        #expect(toStdout.stderr.contains("3 exported") && !toStdout.stderr.contains("user_id,"))
        let help = try await ServerProcess.run(["transfer", "export", "--help"], folder: folder)
        #expect(help.status == 0 && help.stdout.contains("--dry-run"))
        await simulator.stop()
    }
}
