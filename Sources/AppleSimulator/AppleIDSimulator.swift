import HTTPClient
import HTTPServer
import JOSE
import JSON
import Logging
import OpenSSLCrypto
import Synchronization
import TLS

/// An offline stand-in for `appleid.apple.com` that behaves like Apple on the wire, quirks
/// included (docs/guides/operating.md): the keys, authorize, token and revoke endpoints, plus a control API
/// under `/sim/` for tests. Tests, the demo and developers use it instead of Apple.
public final class AppleIDSimulator: Sendable {
    public let teamID: String
    public let keyID: String
    /// The developer's `.p8` whose public half checks client secrets; configure siwa-server
    /// with it (also saved as `AuthKey_<keyID>.p8` in the state directory).
    public let developerKeyPEM: String
    /// In TLS mode, the throwaway CA that issued the simulator's certificate: trust it in the
    /// client (also saved as `ca.pem` in the state directory). nil without TLS.
    public var caCertificatePEM: String? { authority?.certificatePEM }

    private let configuration: SimulatorConfiguration
    private let context: SimulatorContext
    private let router: Router
    private let notifications: NotificationSender
    private let authority: CertificateAuthority?
    private let running = Mutex<Running?>(nil)

    private struct Running: Sendable {
        let server: HTTPServer
        let terminator: TLSTerminator?
        let port: UInt16
        let smtp: SMTPListener?
        let smtpPort: UInt16
    }

    public init(configuration: SimulatorConfiguration = SimulatorConfiguration(), logger: Logger = Logger(label: "siwa.apple-sim")) throws {
        self.configuration = configuration
        self.teamID = configuration.teamID
        self.keyID = configuration.keyID
        let file = configuration.stateDirectory.map(StateFile.init(directory:))
        try file?.createDirectory()

        var state: SimulatorState
        var savedDeveloperKey: String?
        if let saved = try file?.readJSON(SimulatorStore.fileName) {
            (state, savedDeveloperKey) = try SimulatorState.load(saved, primaryTeamID: configuration.teamID)
        } else {
            state = SimulatorState(signingKeys: try SigningKeyRing.generate(configuration.makeSigningKey), primaryTeamID: configuration.teamID)
        }
        let developerKeyFile = "AuthKey_\(configuration.keyID).p8"
        let developerKeyPEM: String
        if let configured = configuration.developerKeyPEM {
            developerKeyPEM = configured
        } else if let saved = savedDeveloperKey ?? file?.read(developerKeyFile).map({ String(decoding: $0, as: UTF8.self) }) {
            developerKeyPEM = saved
        } else {
            developerKeyPEM = try P256PrivateKey.generate().pem()
        }
        let primaryTeam = try SimulatorTeam(teamID: configuration.teamID, keyID: configuration.keyID, developerKeyPEM: developerKeyPEM)
        self.developerKeyPEM = developerKeyPEM
        try file?.write(developerKeyFile, Array(developerKeyPEM.utf8))

        authority = configuration.tls ? try Self.certificateAuthority(file) : nil

        for domain in configuration.relayDomains {
            guard let name = RelayDomainName.normalize(domain) else {
                throw ControlFailure("relay domain \(domain.debugDescription) is not a domain name")
            }
            state.relayDomains[configuration.teamID, default: []].insert(name)
        }
        let store = SimulatorStore(state: state, file: file, developerKeyPEM: developerKeyPEM, logger: logger)
        try store.saveNow()
        let context = SimulatorContext(
            primaryTeam: primaryTeam, clock: configuration.clock, makeSigningKey: configuration.makeSigningKey, store: store,
            mailbox: Mailbox(capacity: configuration.mail?.mailboxCapacity ?? SimulatorMailSettings().mailboxCapacity), logger: logger)
        self.context = context
        // Notifications go to the developer's server; two threads are plenty for a test tool.
        let notifications = NotificationSender(context: context, client: try HTTPClient(configuration: HTTPClientConfiguration(workerThreads: 2)))
        self.notifications = notifications
        self.router = Self.makeRouter(
            context: context, notifications: notifications, requestGuard: ControlRequestGuard(listenHost: configuration.host))
    }

    private static func makeRouter(context: SimulatorContext, notifications: NotificationSender, requestGuard: ControlRequestGuard) -> Router {
        var router = Router()
        let keys = KeysEndpoint(context: context)
        let authorize = AuthorizeEndpoint(context: context)
        let token = TokenEndpoint(context: context)
        let revoke = RevokeEndpoint(context: context)
        let migration = UserMigrationEndpoint(context: context)
        func apple(_ endpoint: SimulatorFault.Endpoint, _ handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) -> HTTPHandler {
            { request in
                context.calls.record(endpoint, request, time: context.now)
                return await context.faults.perform(endpoint, request) { handler($0) }
            }
        }
        router.add(.get, "/auth/keys", apple(.keys, keys.handle))
        router.add(.get, "/auth/authorize", apple(.authorize, authorize.show))
        router.add(.post, "/auth/authorize", apple(.authorize, authorize.submit))
        router.add(.post, "/auth/token", apple(.token, token.handle))
        router.add(.post, "/auth/revoke", apple(.revoke, revoke.handle))
        router.add(.post, "/auth/usermigrationinfo", apple(.userMigrationInfo, migration.handle))
        router.add(.get, MailboxPage.path) { request in MailboxPage.handle(request, mailbox: context.mailbox) }
        ControlAPI(context: context, notifications: notifications, requestGuard: requestGuard).register(into: &router)
        return router
    }

    /// The CA kept in the state directory (so a client configured to trust it keeps working
    /// across restarts), or a new one.
    private static func certificateAuthority(_ file: StateFile?) throws -> CertificateAuthority {
        if let file, let certificate = file.read("ca.pem"), let key = file.read("ca-key.pem"),
           let authority = try? CertificateAuthority(
               certificatePEM: String(decoding: certificate, as: UTF8.self), privateKeyPEM: String(decoding: key, as: UTF8.self))
        {
            return authority
        }
        let authority = try CertificateAuthority(commonName: "Apple ID simulator throwaway CA")
        try file?.write("ca-key.pem", Array(authority.privateKeyPEM.utf8))
        try file?.write("ca.pem", Array(authority.certificatePEM.utf8), mode: 0o644)
        return authority
    }

    // MARK: Running

    /// Starts serving; returns the port clients connect to (the TLS port in TLS mode).
    @discardableResult
    public func start() throws -> UInt16 {
        if let port = running.withLock({ $0?.port }) { return port }
        // In TLS mode the HTTP server listens on loopback only, behind the TLS front.
        // Everything that can fail before a socket is open comes first.
        let tlsContext = try authority.map { authority in
            try TLSServerContext(authority.issue(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1", "::1"]))
        }
        // In TLS mode the HTTP server listens on loopback only, behind the TLS front.
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(
                host: tlsContext == nil ? configuration.host : "127.0.0.1", port: tlsContext == nil ? configuration.port : 0, threads: 2),
            router: router, logger: context.logger)
        let backendPort = try server.start()
        var terminator: TLSTerminator?
        var port = backendPort
        if let tlsContext {
            let front = TLSTerminator(context: tlsContext, backendPort: backendPort, host: configuration.host, port: configuration.port)
            do {
                port = try front.start()
            } catch {
                Task { await server.stop() }
                throw error
            }
            terminator = front
        }
        var smtp: SMTPListener?
        var smtpPort: UInt16 = 0
        if let settings = configuration.mail {
            let context = self.context
            let listener = SMTPListener(
                settings: settings, route: { context.route(recipient: $0, sender: $1) },
                deliver: { mailFrom, recipients, data in
                    let message = context.mailbox.add(receivedAt: context.now, mailFrom: mailFrom, recipients: recipients, data: data)
                    context.logger.info(
                        "mail accepted",
                        metadata: ["id": "\(message.id)", "from": "\(mailFrom)", "to": "\(message.to.joined(separator: ","))"])
                    return message.id
                })
            do {
                smtpPort = try listener.start()
            } catch {
                terminator?.stop()
                Task { await server.stop() }
                throw error
            }
            smtp = listener
        }
        running.withLock { $0 = Running(server: server, terminator: terminator, port: port, smtp: smtp, smtpPort: smtpPort) }
        return port
    }

    public func stop() async {
        guard let current = running.withLock({ state -> Running? in
            defer { state = nil }
            return state
        }) else { return }
        current.terminator?.stop()
        current.smtp?.stop()
        await current.server.stop()
    }

    /// The port clients use; 0 before `start`.
    public var port: UInt16 { running.withLock { $0?.port ?? 0 } }

    /// The SMTP listener's port on 127.0.0.1; 0 before `start` or without `mail` settings.
    public var smtpPort: UInt16 { running.withLock { $0?.smtpPort ?? 0 } }

    /// Where clients reach the simulator, to configure as siwa-server's `apple_base_url`:
    /// `http://127.0.0.1:PORT`, or `https://localhost:PORT` in TLS mode (the certificate's name).
    public var baseURL: String {
        authority == nil ? "http://\(Self.urlHost(configuration.host)):\(port)" : "https://localhost:\(port)"
    }

    private static func urlHost(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }

    // MARK: In-process control (the `/sim/` API without HTTP)

    /// What `POST /sim/codes` returns: a code and identity token as a phone receives them.
    public func issueCode(
        sub: String, clientID: String, nonce: String? = nil, email: String? = nil, isPrivateEmail: Bool? = nil,
        redirectURI: String? = nil
    ) throws -> NativeCode {
        try context.issueNativeCode(
            sub: sub, clientID: clientID, nonce: nonce, email: email, isPrivateEmail: isPrivateEmail, redirectURI: redirectURI)
    }

    /// Signs `claims` with the current key as Apple signs an id_token (RS256, the key's `kid`),
    /// for testing a verifier with tokens Apple would never issue: another issuer, expired, from
    /// the future. Fields in `header` are added to or replace `kid` and `alg` (the signature
    /// stays RS256 whatever `alg` claims).
    public func signToken(claims: JSONObject, header: JSONObject = JSONObject()) throws -> String {
        let key = context.store.read { $0.signingKeys.current }
        var fullHeader = JSONObject([("kid", .string(key.kid)), ("alg", .string("RS256"))])
        for (name, value) in header { fullHeader[name] = value }
        return try CompactJWS.signRS256(header: fullHeader, payload: claims, key: key.key)
    }

    /// Signs and POSTs a notification to `url`; returns the receiver's status and the `jti`.
    public func notify(_ event: NotificationEvent, to url: String) async throws -> (status: Int, jti: String) {
        try await notifications.send(event, to: url)
    }

    /// A signed notification JWS without delivering it.
    public func notificationPayload(_ event: NotificationEvent) throws -> String {
        try context.signNotification(event).payload
    }

    /// The person stops using Sign in with Apple for the client; returns how many tokens died.
    @discardableResult
    public func revokeConsent(sub: String, clientID: String) -> Int {
        context.revokeConsent(sub: sub, clientID: clientID)
    }

    /// The Apple Account is deleted; returns whether it was known.
    @discardableResult
    public func deleteAccount(sub: String) -> Bool {
        context.deleteAccount(sub: sub)
    }

    /// A new signing key; returns the published kids, oldest first (the last signs).
    @discardableResult
    public func rotateKeys() throws -> [String] {
        try context.rotateKeys()
    }

    /// The published kids, oldest first; the last signs.
    public var keyIDs: [String] { context.store.read { $0.signingKeys.keys.map(\.kid) } }

    public func injectFault(_ fault: SimulatorFault) { context.faults.add(fault) }

    public func clearFaults() { context.faults.clear() }

    /// Every call received on Apple's endpoints, oldest first.
    public var calls: [SimulatorCall] { context.calls.all }

    public func clearCalls() { context.calls.clear() }

    /// The `sub` the simulator gives the person with this Apple ID (made on first sight).
    public func subject(forAppleID appleID: String) -> String {
        let teamID = self.teamID
        let now = context.now
        return context.store.change { $0.person(appleID: appleID, teamID: teamID, now: now).sub }
    }

    // MARK: Teams and transfers (APPLE.md §8)

    /// The team with this ID, made with a key of its own when new (`POST /sim/teams`).
    public func team(_ teamID: String) throws -> SimulatorTeam {
        try context.makeTeam(teamID)
    }

    /// Moves an app to `toTeam` (`POST /sim/transfer`).
    public func transfer(clientID: String, toTeam: String) throws -> SimulatorTransfer {
        try context.transfer(clientID: clientID, toTeam: toTeam)
    }

    // MARK: Private Email Relay and the mailbox

    /// Registers sending domains for a team's relay addresses (`POST /sim/relay/domains`);
    /// returns all of the team's domains. The configured team when `teamID` is nil.
    @discardableResult
    public func registerRelayDomains(_ domains: [String], teamID: String? = nil) throws -> [String] {
        try context.registerRelayDomains(domains, teamID: teamID ?? self.teamID)
    }

    /// The person turns forwarding off or on for one app (`POST /sim/relay/forwarding`).
    public func setEmailForwarding(sub: String, clientID: String, enabled: Bool) throws {
        _ = try context.setEmailForwarding(sub: sub, clientID: clientID, enabled: enabled)
    }

    /// The relay address the person behind `sub` has in their team.
    public func relayEmail(sub: String) -> String? {
        context.store.read { $0.persons[sub]?.relayEmail }
    }

    /// Messages the SMTP listener accepted, oldest first; only those to `address` when given.
    public func mailbox(to address: String? = nil) -> [MailboxMessage] {
        context.mailbox.messages(to: address)
    }

    public func clearMailbox() { context.mailbox.clear() }

    /// The simulated time, Unix seconds.
    public var now: Int64 { context.now }

    /// Moves the simulated clock (`POST /sim/clock`); returns the new time.
    @discardableResult
    public func advanceClock(seconds: Int64) -> Int64 {
        context.advanceClock(by: seconds)
    }

    /// Records that the person has authorized `clientID` before, as a sign-in would, without
    /// signing anything: for seeding thousands of users fast.
    public func recordAuthorization(sub: String, clientID: String, email: String? = nil, isPrivateEmail: Bool? = nil) {
        context.recordAuthorization(sub: sub, clientID: clientID, email: email, isPrivateEmail: isPrivateEmail)
    }

    /// The `sub` the person behind `sub` has in `teamID`; nil when the simulator has not seen
    /// `sub`.
    public func subject(of sub: String, inTeam teamID: String) -> String? {
        context.subject(of: sub, inTeam: teamID)
    }
}
