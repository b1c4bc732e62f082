// The account-layer benchmarks' stand-in for Apple: an Apple ID simulator in this process,
// and request bodies signed ahead of time, so wrk measures the server and not the signing.
//
//   siwa-bench fixture DIR [--sign-ins N] [--notifications N] [--slow-sign-ins N] [--users N]
//
// Writes into DIR:
//   env                 SIWA_* settings that point siwa-server at the simulator (the app's bundle ID
//                       and a Services ID for the web, so native codes go without redirect_uri)
//   developer-key.p8    the key those settings name
//   me-sign-in.json     one sign-in body (the session the /api/me runs use)
//   sign-ins.jsonl      identity-token sign-ins without a code, one body a line, each token unique
//   notifications.jsonl server-to-server notifications (email-disabled / -enabled, alternating)
//                       for the users the sign-ins create, each with its own jti
//   slow-sign-ins.jsonl sign-ins with an authorization code, for the slow-Apple run
//   ready               written last
// then serves until it is killed. The simulator's control API (/sim/faults) is on its port.
import AppleSimulator
import Dispatch
import Glibc
import JOSE
import JSON
import OpenSSLCrypto
import Synchronization
import WireFormat

struct AppleFixture {
    static let clientID = "com.example.app"
    static let nonce = "bench-nonce"

    var folder: String
    var signIns = 100_000
    var notifications = 80_000
    var slowSignIns = 400
    var users = 5_000

    /// A fixture that only writes files (`write(_:to:)`), for the transfer fixture.
    init(folder: String) {
        self.folder = folder
    }

    init(arguments: [String]) throws {
        guard let folder = arguments.first else { throw Failure("usage: siwa-bench fixture DIR [--sign-ins N] [--notifications N] [--slow-sign-ins N] [--users N]") }
        self.folder = folder
        var index = 1
        while index < arguments.count {
            guard index + 1 < arguments.count, let value = Int(arguments[index + 1]), value >= 0 else {
                throw Failure("\(arguments[index]) needs a whole number")
            }
            switch arguments[index] {
            case "--sign-ins": signIns = value
            case "--notifications": notifications = value
            case "--slow-sign-ins": slowSignIns = value
            case "--users": users = max(1, value)
            default: throw Failure("unknown option \(arguments[index])")
            }
            index += 2
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    func run() throws {
        let simulator = try AppleIDSimulator()
        try simulator.start()
        mkdir(folder, 0o755)
        let keyPath = folder + "/developer-key.p8"
        try write(simulator.developerKeyPEM, to: keyPath)
        try write(
            """
            SIWA_APPLE_BASE_URL=\(simulator.baseURL)
            SIWA_TEAM_ID=\(simulator.teamID)
            SIWA_KEY_ID=\(simulator.keyID)
            SIWA_PRIVATE_KEY_FILE=\(keyPath)
            SIWA_CLIENT_IDS=\(Self.clientID),com.example.web
            SIWA_WEB_CLIENT_ID=com.example.web

            """, to: folder + "/env")

        let now = Int64(time(nil))
        try write(signInBody(simulator, sub: "000900.me.0900", now: now) + "\n", to: folder + "/me-sign-in.json")
        try writeLines(to: folder + "/sign-ins.jsonl", count: signIns) { index in
            try signInBody(simulator, sub: sub(index % users), now: now)
        }
        try writeLines(to: folder + "/notifications.jsonl", count: notifications) { index in
            let type = (index / users) % 2 == 0 ? "email-disabled" : "email-enabled"
            let event = NotificationEvent(
                type: type, sub: sub(index % users), email: "bench\(index % users)@privaterelay.appleid.com", isPrivateEmail: true,
                clientID: Self.clientID)
            return JSONWriter.string(.object(JSONObject([("payload", .string(try simulator.notificationPayload(event)))])))
        }
        try writeLines(to: folder + "/slow-sign-ins.jsonl", count: slowSignIns) { index in
            let issued = try simulator.issueCode(sub: "000901.slow\(index).0901", clientID: Self.clientID, nonce: Self.nonce)
            return JSONWriter.string(.object(JSONObject([
                ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string(Self.nonce)),
            ])))
        }
        try write("\(simulator.baseURL)\n", to: folder + "/ready")
        // Serves until SIGTERM (whose default action ends the process).
        while true { pause() }
    }

    func sub(_ index: Int) -> String { "000902.\(String(index, radix: 16)).0902" }

    /// A native-style identity token, unique by its `c_hash` (a random code never sent), valid
    /// for an hour so a long run does not outlive it.
    func signInBody(_ simulator: AppleIDSimulator, sub: String, now: Int64) throws -> String {
        let claims = JSONObject([
            ("iss", .string("https://appleid.apple.com")), ("aud", .string(Self.clientID)), ("exp", .integer(now + 3_600)),
            ("iat", .integer(now)), ("sub", .string(sub)), ("c_hash", .string(TokenVerifier.codeHash(Base64.url.encode(SecureRandom.bytes(16))))),
            ("nonce", .string(Self.nonce)), ("email", .string("\(sub)@privaterelay.appleid.com")), ("email_verified", .string("true")),
            ("is_private_email", .string("true")), ("auth_time", .integer(now)), ("nonce_supported", .bool(true)),
            ("real_user_status", .integer(2)),
        ])
        return JSONWriter.string(.object(JSONObject([
            ("identity_token", .string(try simulator.signToken(claims: claims))), ("nonce", .string(Self.nonce)),
            ("device_name", .string("bench")),
        ])))
    }

    /// `count` lines made by `line`, signed on every core.
    func writeLines(to path: String, count: Int, _ line: @escaping @Sendable (Int) throws -> String) throws {
        let workers = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        // Each worker's lines, in worker order (they interleave, which wrk does not mind).
        let chunks = Mutex<[Result<String, Failure>]>(Array(repeating: .success(""), count: workers))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var text = ""
            do {
                for index in stride(from: worker, to: count, by: workers) { text += try line(index) + "\n" }
            } catch {
                chunks.withLock { $0[worker] = .failure(Failure("\(path): \(error)")) }
                return
            }
            chunks.withLock { $0[worker] = .success(text) }
        }
        try write(try chunks.withLock { try $0.map { try $0.get() } }.joined(), to: path)
    }

    func write(_ text: String, to path: String) throws {
        guard let file = fopen(path, "w") else { throw Failure("cannot write \(path)") }
        defer { fclose(file) }
        let bytes = Array(text.utf8)
        guard fwrite(bytes, 1, bytes.count, file) == bytes.count else { throw Failure("cannot write \(path)") }
    }
}
