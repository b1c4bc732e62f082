import TestSupport
import AppleSimulator
import Glibc
import HTTPClient
import JOSE
import JSON
import OpenSSLCrypto
import Synchronization
import Testing
import WireFormat

/// Where the simulator's held clock starts, unless a test says otherwise.
let simulatorStart: Int64 = 1_750_000_000

/// A started simulator on a free loopback port, a client for it and a way to mint client
/// secrets with its developer key.
struct SimulatorHarness: Sendable {
    let simulator: AppleIDSimulator
    let clock: HeldClock
    let client: HTTPClient
    let minter: ClientSecretMinter
    let developerKey: P256PrivateKey

    static func start(
        stateDirectory: String? = nil, tls: Bool = false, clock: HeldClock = HeldClock(simulatorStart), mail: SimulatorMailSettings? = nil,
        relayDomains: [String] = []
    ) throws -> SimulatorHarness {
        var configuration = SimulatorConfiguration(
            stateDirectory: stateDirectory, tls: tls, clock: { clock.now }, makeSigningKey: TestSigningKeys.source(), mail: mail,
            relayDomains: relayDomains)
        configuration.port = 0
        let simulator = try AppleIDSimulator(configuration: configuration)
        try simulator.start()
        let developerKey = try P256PrivateKey(pem: simulator.developerKeyPEM)
        var clientConfiguration = HTTPClientConfiguration(workerThreads: 4)
        if let ca = simulator.caCertificatePEM {
            clientConfiguration.extraCAPEM = ca
            clientConfiguration.trustOnlyExtraCAs = true
        }
        return SimulatorHarness(
            simulator: simulator, clock: clock, client: try HTTPClient(configuration: clientConfiguration),
            minter: ClientSecretMinter(teamID: simulator.teamID, keyID: simulator.keyID, key: developerKey), developerKey: developerKey)
    }

    func stop() async {
        await simulator.stop()
    }

    var baseURL: String { simulator.baseURL }

    func secret(for clientID: String) throws -> String {
        try minter.mint(for: clientID, now: clock.now)
    }

    // MARK: HTTP

    func get(_ path: String) async throws -> HTTPClientResponse {
        try await client.send(HTTPClientRequest(method: "GET", url: baseURL + path), idempotent: true)
    }

    func postForm(_ path: String, _ fields: [(String, String)]) async throws -> HTTPClientResponse {
        try await client.send(
            HTTPClientRequest(
                method: "POST", url: baseURL + path, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: FormURLEncoding.encode(fields)),
            idempotent: false)
    }

    func post(_ path: String, contentType: String, body: String) async throws -> HTTPClientResponse {
        try await client.send(
            HTTPClientRequest(method: "POST", url: baseURL + path, headers: [("Content-Type", contentType)], body: Array(body.utf8)),
            idempotent: false)
    }

    func postJSON(_ path: String, _ members: [(String, JSONValue)]) async throws -> HTTPClientResponse {
        try await post(path, contentType: "application/json", body: JSONWriter.string(.object(JSONObject(members.map { (key: $0.0, value: $0.1) }))))
    }

    func delete(_ path: String) async throws -> HTTPClientResponse {
        try await client.send(HTTPClientRequest(method: "DELETE", url: baseURL + path), idempotent: false)
    }

    // MARK: Flows

    /// `/sim/codes` for a native sign-in.
    func nativeCode(
        sub: String = "000123.0123456789abcdef0123456789abcdef.0123", clientID: String = "com.example.app",
        extra: [(String, JSONValue)] = []
    ) async throws -> (code: String, idToken: String) {
        let response = try await postJSON("/sim/codes", [("sub", .string(sub)), ("client_id", .string(clientID))] + extra)
        #expect(response.status == 200)
        let body = try response.jsonObject()
        let code = try #require(body["code"]?.string)
        let idToken = try #require(body["id_token"]?.string)
        return (code, idToken)
    }

    func exchange(code: String, clientID: String = "com.example.app", redirectURI: String? = nil) async throws -> HTTPClientResponse {
        var fields = [
            ("client_id", clientID), ("client_secret", try secret(for: clientID)), ("code", code), ("grant_type", "authorization_code"),
        ]
        if let redirectURI { fields.append(("redirect_uri", redirectURI)) }
        return try await postForm("/auth/token", fields)
    }

    func refresh(_ token: String, clientID: String = "com.example.app") async throws -> HTTPClientResponse {
        try await postForm("/auth/token", [
            ("client_id", clientID), ("client_secret", try secret(for: clientID)), ("grant_type", "refresh_token"),
            ("refresh_token", token),
        ])
    }

    func revoke(_ token: String, clientID: String = "com.example.app", hint: String? = nil) async throws -> HTTPClientResponse {
        var fields = [("client_id", clientID), ("client_secret", try secret(for: clientID)), ("token", token)]
        if let hint { fields.append(("token_type_hint", hint)) }
        return try await postForm("/auth/revoke", fields)
    }

    /// The published key set, for verifying what the simulator signs.
    func keySet() async throws -> JSONWebKeySet {
        try JSONWebKeySet(json: try await get("/auth/keys").body)
    }
}

extension HTTPClientResponse {
    var text: String { String(decoding: body, as: UTF8.self) }

    func jsonObject() throws -> JSONObject {
        try #require(try JSONParser.parse(body).object, "not a JSON object: \(text)")
    }

    /// The `error` code of an Apple error body.
    var errorCode: String? { (try? JSONParser.parse(body).object)?["error"]?.string }
}

/// A fresh directory under /tmp, removed by the caller.
func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/apple-sim-test-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return String(cString: try #require(path))
}

func removeDirectory(_ path: String) {
    guard let directory = opendir(path) else { return }
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        if name != "." && name != ".." { unlink(path + "/" + name) }
    }
    closedir(directory)
    rmdir(path)
}

/// Runs `body` against a started simulator and stops it afterwards, whatever happened.
func withSimulator(
    stateDirectory: String? = nil, tls: Bool = false, clock: HeldClock = HeldClock(simulatorStart), mail: SimulatorMailSettings? = nil,
    relayDomains: [String] = [], _ body: (SimulatorHarness) async throws -> Void
) async throws {
    let harness = try SimulatorHarness.start(stateDirectory: stateDirectory, tls: tls, clock: clock, mail: mail, relayDomains: relayDomains)
    do {
        try await body(harness)
    } catch {
        await harness.stop()
        throw error
    }
    await harness.stop()
}
