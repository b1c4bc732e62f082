// The team-transfer benchmark's stand-in for Apple (Scripts/bench-transfer): an Apple ID
// simulator in this process, with N people who have authorized the app, so `transfer export`
// and `transfer import` of the real binary have someone to ask about.
//
//   siwa-bench transfer-fixture DIR [--users N]
//
// Writes into DIR:
//   env               SIWA_* settings for team A (the simulator's configured team)
//   developer-key.p8  the key those settings name
//   users.csv         id,sub,email,is_private_email of each person, for the database the benchmark seeds
//   ready             the simulator's base URL, written last
// then serves until it is killed. POST /sim/transfer on its port moves the app to team B.
import AppleSimulator
import Glibc

struct TransferFixture {
    static let clientID = "com.example.app"

    var folder: String
    var users = 10_000

    init(arguments: [String]) throws {
        guard let folder = arguments.first else { throw AppleFixture.Failure("usage: siwa-bench transfer-fixture DIR [--users N]") }
        self.folder = folder
        if arguments.count == 3, arguments[1] == "--users", let count = Int(arguments[2]), count > 0 {
            users = count
        } else if arguments.count != 1 {
            throw AppleFixture.Failure("usage: siwa-bench transfer-fixture DIR [--users N]")
        }
    }

    func run() throws {
        let simulator = try AppleIDSimulator()
        try simulator.start()
        mkdir(folder, 0o755)
        let writer = AppleFixture(folder: folder)
        let keyPath = folder + "/developer-key.p8"
        try writer.write(simulator.developerKeyPEM, to: keyPath)
        try writer.write(
            """
            SIWA_APPLE_BASE_URL=\(simulator.baseURL)
            SIWA_TEAM_ID=\(simulator.teamID)
            SIWA_KEY_ID=\(simulator.keyID)
            SIWA_PRIVATE_KEY_FILE=\(keyPath)
            SIWA_CLIENT_IDS=\(Self.clientID)

            """, to: folder + "/env")
        var lines = "id,sub,email,is_private_email\n"
        for index in 0..<users {
            let sub = "000903.\(String(index, radix: 16)).0903"
            // A third hide their email, as in the wild; the rest share a real one.
            let hidden = index % 3 == 0
            let email = hidden ? "t\(index)@private.icloud.com" : "t\(index)@example.com"
            simulator.recordAuthorization(sub: sub, clientID: Self.clientID, email: email, isPrivateEmail: hidden)
            lines += "usr_transfer\(index),\(sub),\(email),\(hidden ? 1 : 0)\n"
        }
        try writer.write(lines, to: folder + "/users.csv")
        try writer.write("\(simulator.baseURL)\n", to: folder + "/ready")
        // Serves until SIGTERM (whose default action ends the process).
        while true { pause() }
    }
}
