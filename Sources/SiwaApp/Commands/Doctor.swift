import Accounts
import AppleClient
import Glibc
import HTTPClient
import JOSE
import JSON
import OpenSSLCrypto
import WireFormat

/// `doctor`: checks the setup against Apple for real and says which setting to look at
/// (docs/reference/command-line.md). The error users hit most is Apple answering `invalid_client`, with no detail, to a
/// client secret that is wrong in one of four ways; asking Apple's token endpoint with a
/// made-up code tells them apart from everything else: `invalid_grant` means the secret was
/// accepted (only the code was refused), `invalid_client` that it was not. Never prints a secret.
public struct Doctor: Sendable {
    public struct Check: Sendable, Equatable {
        public let name: String
        public let ok: Bool
        public let detail: String
    }

    public let configuration: Configuration?
    /// Problems found reading the configuration, each reported as a failed check.
    public let problems: [ConfigurationError]
    /// Mint the client secret as at this time (seconds since 1970) instead of the clock's.
    public let now: Int64?

    public init(configuration: Configuration?, problems: [ConfigurationError] = [], now: Int64? = nil) {
        self.configuration = configuration
        self.problems = problems
        self.now = now
    }

    public func run() async -> [Check] {
        var checks = problems.map { Check(name: $0.key, ok: false, detail: $0.problem) }
        guard let configuration else { return checks }
        let http: HTTPClient
        do {
            http = try HTTPClient(configuration: HTTPClientConfiguration(extraCAFile: configuration.appleCAFile, workerThreads: 2))
        } catch {
            checks.append(Check(name: "apple_ca_file", ok: false, detail: "cannot set up TLS: \(error)"))
            return checks
        }
        let missing = configuration.serveProblems
        // A key file that could not be read is already reported; it is not "missing" as well.
        let named = Set(problems.map(\.key)).union(problems.contains { $0.key == "private_key_file" } ? ["private_key"] : [])
        checks += missing.filter { !named.contains($0.key) }.map { Check(name: $0.key, ok: false, detail: $0.problem) }
        if missing.isEmpty, let minter = try? AppleCredentials.minter(configuration), let teamID = configuration.teamID,
           let keyID = configuration.keyID, let pem = configuration.privateKeyPEM, let key = try? P256PrivateKey(pem: pem)
        {
            let clock = now ?? Int64(time(nil))
            var answers: [(clientID: String, answer: TokenEndpointAnswer)] = []
            for clientID in configuration.clientIDs {
                let secret: String
                do {
                    secret = try minter.mint(for: clientID, now: clock)
                } catch {
                    checks.append(Check(name: "client secret (\(clientID))", ok: false, detail: "cannot be signed: \(error)"))
                    continue
                }
                let local = Self.inspect(secret, clientID: clientID, teamID: teamID, keyID: keyID, publicKey: key.publicKey, now: clock)
                checks.append(local)
                guard local.ok else { continue }
                answers.append((clientID, await askApple(http, secret: secret, clientID: clientID)))
            }
            // Apple says nothing about why it refuses; whether it refused every client id, or
            // only some, points at the team's credentials or at the client ids.
            let allRefused = answers.allSatisfy { if case .refused = $0.answer { true } else { false } }
            for (clientID, answer) in answers {
                checks.append(Self.check(answer, clientID: clientID, teamID: teamID, allRefused: allRefused))
            }
        }
        checks.append(await keysCheck(http, configuration))
        checks.append(ConfigurationCheck.checkDatabase(configuration.database).asDoctorCheck)
        if let url = configuration.webhookURL { checks.append(await webhookReceiverCheck(url)) }
        if let smtp = await smtpCheck(configuration) { checks.append(smtp) }
        return checks
    }

    /// The secret as Apple will read it (APPLE.md §5): ES256 with `kid`, `iss` the team, `sub`
    /// the client id, `aud` Apple, a lifetime within Apple's six months, and a signature that
    /// verifies with the public half of the configured key.
    static func inspect(_ secret: String, clientID: String, teamID: String, keyID: String, publicKey: P256PublicKey, now: Int64) -> Check {
        let name = "client secret (\(clientID))"
        func fail(_ detail: String) -> Check { Check(name: name, ok: false, detail: detail) }
        guard let jws = try? CompactJWS(secret) else { return fail("is not a compact JWS") }
        guard jws.algorithm == "ES256" else { return fail("alg is not ES256") }
        guard jws.keyID == keyID else { return fail("kid is not key_id") }
        guard jws.payload["iss"]?.string == teamID else { return fail("iss is not team_id") }
        guard jws.payload["sub"]?.string == clientID else { return fail("sub is not the client id") }
        guard jws.payload["aud"]?.string == TokenVerifier.appleIssuer else { return fail("aud is not \(TokenVerifier.appleIssuer)") }
        guard let issuedAt = jws.payload["iat"]?.integer, let expiresAt = jws.payload["exp"]?.integer else {
            return fail("iat or exp is missing")
        }
        let lifetime = expiresAt - issuedAt
        guard lifetime > 0, lifetime <= ClientSecretMinter.appleMaximumLifetime else {
            return fail("lives \(lifetime) s; Apple allows at most \(ClientSecretMinter.appleMaximumLifetime) s (about six months)")
        }
        guard expiresAt > now else { return fail("has expired") }
        guard publicKey.verifyES256(signature: jws.signature, message: jws.signingInput) else {
            return fail("signature does not verify with private_key's public half")
        }
        return Check(name: name, ok: true, detail: "ES256, kid \(keyID), iss \(teamID), lifetime \(DurationParser.format(.seconds(lifetime)))")
    }

    /// What the token endpoint said to a made-up code.
    enum TokenEndpointAnswer: Sendable, Equatable {
        /// `invalid_grant`: the secret was accepted, only the code refused.
        case accepted
        /// `invalid_client`, with Apple's description when it gave one (the simulator does).
        case refused(description: String?)
        case failed(String)
    }

    static func check(_ answer: TokenEndpointAnswer, clientID: String, teamID: String, allRefused: Bool) -> Check {
        let name = "apple token endpoint (\(clientID))"
        switch answer {
        case .accepted:
            return Check(name: name, ok: true, detail: "Apple accepts the client secret (invalid_grant for a made-up code)")
        case .refused(let description?):
            return Check(name: name, ok: false, detail: "Apple refuses the client secret (invalid_client: \"\(description)\"); \(hint(for: description))")
        case .refused(nil):
            let hint = allRefused
                ? "check team_id, key_id and private_key (the .p8 whose ID is key_id, from team \(teamID))"
                : "check client_ids: \(clientID) may not be an App ID or Services ID of team \(teamID) with Sign in with Apple"
            return Check(name: name, ok: false, detail: "Apple refuses the client secret (invalid_client); \(hint)")
        case .failed(let detail):
            return Check(name: name, ok: false, detail: detail)
        }
    }

    /// POSTs a made-up code with the secret to `{apple_base_url}/auth/token`.
    private func askApple(_ http: HTTPClient, secret: String, clientID: String) async -> TokenEndpointAnswer {
        let code = "siwa-doctor." + Base64.url.encode(SecureRandom.bytes(16))
        let request = HTTPClientRequest(
            method: "POST", url: configurationBaseURL + AppleEndpoint.token.path,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: FormURLEncoding.encode([
                ("grant_type", "authorization_code"), ("code", code), ("client_id", clientID), ("client_secret", secret),
            ]))
        let response: HTTPClientResponse
        do {
            response = try await http.send(request, idempotent: false)
        } catch {
            return .failed("cannot reach \(configurationBaseURL): \(error) (check apple_base_url, apple_ca_file)")
        }
        let body = (try? JSONParser.parse(response.body).object) ?? JSONObject()
        let error = body["error"]?.string
        switch (response.status, error) {
        case (400, "invalid_grant"?):
            return .accepted
        case (_, "invalid_client"?):
            // Apple's descriptions hold no secret; checked anyway, since this goes to a terminal.
            let description = body["error_description"]?.string.map { String($0.prefix(200)) }
            return .refused(description: description.flatMap { $0.contains(secret) || $0.contains(code) ? nil : $0 })
        default:
            return .failed("unexpected answer: HTTP \(response.status), \(error ?? "no error code") (check apple_base_url)")
        }
    }

    private var configurationBaseURL: String { configuration?.appleBaseURL ?? Configuration.defaultAppleBaseURL }

    /// The setting behind a refusal Apple (or the simulator) explained.
    static func hint(for description: String) -> String {
        let text = description.lowercased()
        if text.contains("expired") || text.contains("lifetime") {
            return "check this machine's clock: the secret's iat and exp come from it"
        }
        if text.contains("kid") { return "check key_id: it must be the ID of the key in private_key" }
        if text.contains("iss") || text.contains("team") { return "check team_id: it must be the team that owns key_id" }
        if text.contains("signature") { return "check private_key: it must be the .p8 whose ID is key_id" }
        if text.contains("sub") || text.contains("client_id") { return "check client_ids" }
        return "check team_id, key_id, private_key and client_ids"
    }

    private func keysCheck(_ http: HTTPClient, _ configuration: Configuration) async -> Check {
        let url = configuration.appleBaseURL + AppleEndpoint.keys.path
        do {
            let response = try await http.send(HTTPClientRequest(method: "GET", url: url), idempotent: true)
            guard response.status == 200 else { return Check(name: "apple keys", ok: false, detail: "\(url) answered HTTP \(response.status)") }
            let keys = try JSONWebKeySet(json: response.body)
            return Check(name: "apple keys", ok: true, detail: "\(keys.keys.count) signing key(s) from \(url)")
        } catch {
            return Check(name: "apple keys", ok: false, detail: "cannot load \(url): \(error) (check apple_base_url, apple_ca_file)")
        }
    }

    /// Whether the webhook receiver can be reached as the deliverer reaches it (its client:
    /// the system's CAs, 3 s to connect, 10 s in all). A HEAD request, which no receiver takes
    /// for an event (events are signed POSTs): any HTTP answer shows that the address, the
    /// connection and TLS work. Names the origin only; a path or query may hold a token.
    func webhookReceiverCheck(_ url: String) async -> Check {
        let name = "webhook receiver"
        let origin = (try? SettingURL.parse(url))?.origin ?? "webhook_url"
        do {
            let http = try WebhookDeliverer.client(concurrency: 1)
            let response = try await http.send(HTTPClientRequest(method: "HEAD", url: url), idempotent: true)
            return Check(name: name, ok: true, detail: "\(origin) is reachable (HTTP \(response.status) to a HEAD request; events are signed POSTs)")
        } catch {
            return Check(name: name, ok: false, detail: "cannot reach \(origin): \(error) (check webhook_url, and that the receiver is up)")
        }
    }

    /// One line per check, then a verdict.
    public static func report(_ checks: [Check]) -> String {
        var lines = checks.map { "\($0.ok ? "ok  " : "FAIL") \($0.name): \($0.detail)" }
        let failed = checks.filter { !$0.ok }.count
        lines.append(failed == 0 ? "all checks passed" : "\(failed) check(s) failed")
        return lines.joined(separator: "\n")
    }
}

extension ConfigurationCheck.Finding {
    var asDoctorCheck: Doctor.Check { Doctor.Check(name: key, ok: ok, detail: detail) }
}
