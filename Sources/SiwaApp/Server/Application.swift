import Accounts
import HTTPClient
import HTTPServer
import Logging
import Passwords
import SMTP
import Store
import Synchronization

/// The assembled server: the database, the routes and the HTTP server, from one
/// `Configuration`. `serve` runs one; tests start one on port 0.
public final class Application: Sendable {
    public let configuration: Configuration
    public let metrics: Metrics
    private let accessLogSink: LogSink
    /// `package` so that the application test harness seeds and inspects rows through it.
    package let store: Store
    private let server: HTTPServer
    /// Turns a request into a response without a socket: tests run one body in process or over
    /// the wire.
    public let responder: RoutingResponder
    private let logger: Logger
    let apple: AppleServices
    /// Apple's refresh and access tokens, sealed at rest.
    var tokenVault: AppleTokenVault { store.vault }
    /// Works the revocation queue; holds what the queue cannot take while the database is away.
    let revoker: Revoker
    private let refreshValidator: RefreshValidator?
    /// Delivers the webhook outbox when `webhook_url` is set.
    private let webhookDeliverer: WebhookDeliverer?
    /// Delivers the mail outbox when `smtp_url` is set.
    let mailDeliverer: MailDeliverer?
    private let housekeeping: Housekeeping
    /// Sessions' last-use times, written in batches; what is pending is written at stop.
    private let lastSeen: LastSeenBatcher
    private let wallClock: @Sendable () -> Int64
    /// scrypt's own threads (docs/guides/passwords-and-email.md): at most `threads` hashes at once, the rest queued.
    let passwordHasher: PasswordHasher
    /// The demo's own webhook receiver (`siwa-server demo` only).
    let demoWebhooks: DemoWebhookReceiver?
    /// Reset requests' work, run after their answers; drained at a graceful stop.
    let emailRequests: EmailRequestQueue
    /// The access-token signing keys, as this instance last read them.
    let accessTokenKeys: AccessTokenKeys
    /// The route table as served (`Routes`), for the tests that hold the OpenAPI document to it.
    let routeTable: [Route]
    /// Method and pattern of every route served.
    var routes: [(method: String, pattern: String)] { routeTable.map { ($0.method.rawValue, $0.path) } }
    private let background = Mutex<[Task<Void, Never>]>([])

    /// Opens the database (creating it and applying migrations) and assembles the parts, the
    /// route table (`Routes`) among them.
    /// - Parameters:
    ///   - demo: `siwa-server demo`: the sign-in page leads to the Apple ID simulator (at
    ///     `appleBaseURL`) instead of using Sign in with Apple JS.
    ///   - clocks: what every part reads the time from.
    public init(
        configuration: Configuration, logger: Logger = Logger(label: "siwa"), accessLogSink: LogSink = .standardOutput, demo: Bool = false,
        clocks: Clocks = .system
    ) throws {
        self.configuration = configuration
        self.logger = logger
        // The vault's key is settled at start: a missing or unusable key stops the server here,
        // not at the first sign-in.
        let metrics = Metrics()
        self.metrics = metrics
        metrics.countDroppedLogLines(of: accessLogSink)
        self.accessLogSink = accessLogSink
        let (store, dataKey) = try Store.open(
            configuration, connections: configuration.threads + 2, logger: logger, suppressed: metrics.emailSuppressed)
        self.store = store
        do {
            accessTokenKeys = try AccessTokenKeys(
                store: store.signingKeys, rotation: Int64(configuration.signingKeyRotation.components.seconds), logger: logger,
                clock: clocks.wall)
        } catch {
            store.close()
            throw error
        }

        let apple: AppleServices
        do {
            apple = try AppleServices(configuration: configuration, serverState: store.serverState, metrics: metrics, clocks: clocks, logger: logger)
        } catch {
            store.close()
            throw error
        }
        self.apple = apple

        let trustedProxies = configuration.trustedProxies
        let notifications = NotificationProcessor(
            store: store, keys: apple.keys, audiences: configuration.clientIDs.isEmpty ? nil : Set(configuration.clientIDs),
            metrics: metrics.accounts, logger: logger, clock: clocks.wall)
        let sessions = store.sessions
        let idleTTL = Int64(configuration.sessionIdleTTL.components.seconds)
        lastSeen = store.lastSeenBatcher(interval: LastSeenBatcher.interval(idleTTL: idleTTL), now: clocks.wall())
        wallClock = clocks.wall
        let authenticator = SessionAuthenticator(
            sessions: sessions, batcher: lastSeen, idleTTL: idleTTL, publicOrigin: configuration.publicOrigin,
            crossOrigins: Set(configuration.corsOrigins), clock: clocks.wall, trustedProxies: trustedProxies)
        metrics.countActiveSessions { try? await sessions.countLive(now: clocks.wall(), idleTTL: idleTTL) }
        metrics.watchSessionCacheListener { store.sessionCacheListener }
        housekeeping = Housekeeping(
            store: store, idleTTL: idleTTL, logger: logger, clock: clocks.wall,
            auditRetention: Int64(configuration.auditRetention.components.seconds))
        let revoker = Revoker(
            api: apple.api, store: store, backoff: Int64(configuration.revocationBackoff.components.seconds),
            backoffMax: Int64(configuration.revocationBackoffMax.components.seconds), metrics: metrics.accounts, logger: logger,
            clock: clocks.wall)
        self.revoker = revoker
        let signIn = SignIn(
            settings: SignIn.Settings(configuration), store: store, keys: apple.keys, api: apple.api, revoker: revoker,
            metrics: metrics.accounts, logger: logger, clock: clocks.wall)
        let cookies = SessionCookies(publicOrigin: configuration.publicOrigin)
        let validationInterval = Int64(configuration.refreshValidationInterval.components.seconds)
        if let api = apple.api, validationInterval > 0 {
            refreshValidator = RefreshValidator(
                api: api, store: store, interval: validationInterval, idleTTL: idleTTL, maxPerSecond: RefreshValidator.defaultMaxPerSecond,
                metrics: metrics.accounts, logger: logger, clock: clocks.wall, receivingTeam: configuration.teamID)
        } else {
            refreshValidator = nil
        }
        if let url = configuration.webhookURL, let secret = configuration.webhookSecret {
            let concurrency = WebhookDeliverer.defaultConcurrency
            let http: HTTPClient
            do {
                http = try WebhookDeliverer.client(concurrency: concurrency, deadline: configuration.webhookAttemptDeadline)
            } catch {
                store.close()
                throw error
            }
            var deliverer = WebhookDeliverer(
                queue: store.webhooks, http: http, url: url, secret: secret,
                backoff: Int64(configuration.webhookBackoff.components.seconds),
                retention: Int64(configuration.webhookRetention.components.seconds), concurrency: concurrency, metrics: metrics.accounts,
                logger: logger, clock: clocks.wall)
            deliverer.lease = WebhookDeliverer.lease(deadline: configuration.webhookAttemptDeadline)
            webhookDeliverer = deliverer
        } else {
            webhookDeliverer = nil
        }
        if let url = configuration.smtpURL, let from = configuration.emailFrom {
            do {
                let client = try SMTPClient(configuration: SMTPConfiguration(url: url, extraCAFile: configuration.smtpCAFile))
                mailDeliverer = MailDeliverer(
                    queue: store.mail, client: client, from: from, publicURL: configuration.publicURL,
                    retention: Int64(configuration.emailRetention.components.seconds), metrics: metrics.mail, logger: logger, clock: clocks.wall)
            } catch {
                store.close()
                throw error
            }
        } else {
            mailDeliverer = nil
        }
        let deletion = AccountDeletion(store: store, revoker: revoker, clock: clocks.wall)

        let hasher: PasswordHasher
        do {
            hasher = try PasswordHasher(threads: configuration.threads)
        } catch {
            store.close()
            throw error
        }
        passwordHasher = hasher
        let emailRequests = EmailRequestQueue(outcomes: metrics.emailRequests, logger: logger)
        self.emailRequests = emailRequests
        let passwords = PasswordAccounts(
            store: store, hasher: hasher, sessionTTL: Int64(configuration.sessionTTL.components.seconds),
            canDeliverResetCodes: configuration.webhookURL != nil || configuration.smtpURL != nil, emailSuppressed: metrics.emailSuppressed,
            requests: emailRequests, clock: clocks.wall)

        let demoWebhooks = demo ? configuration.webhookSecret.map { DemoWebhookReceiver(secret: $0, clock: clocks.wall) } : nil
        self.demoWebhooks = demoWebhooks

        let signInMode: Pages.SignInMode =
            demo ? .demo(mailboxURL: configuration.appleBaseURL + "/mailbox") : .apple(clientID: configuration.webClientID ?? "", redirectURI: configuration.redirectURI)
        let csrf = CSRFToken(dataKey: dataKey)
        let webSignIn = WebSignIn(
            configuration: configuration, store: store.webSignIns, sessions: sessions, signIn: signIn, cookies: cookies, logger: logger,
            clock: clocks.wall)
        let passwordForms = PasswordForms(accounts: passwords, cookies: cookies, csrf: csrf, trustedProxies: trustedProxies)

        let table = Routes(
            health: HealthAPI(readiness: Readiness(store: store, keys: apple.keys), metricsRegistry: metrics),
            notifications: NotificationsAPI(processor: notifications),
            account: AccountAPI(
                sessions: sessions, replay: store.replay, accounts: store, deletion: deletion, idleTTL: idleTTL, clock: clocks.wall,
                trustedProxies: trustedProxies),
            nativeSignIn: NativeSignInAPI(signIn: signIn, cookies: cookies, trustedProxies: trustedProxies),
            exchange: AppCodeExchangeAPI(
                store: store, sessionTTL: Int64(configuration.sessionTTL.components.seconds), clock: clocks.wall, trustedProxies: trustedProxies),
            passwords: PasswordAPI(accounts: passwords, signIn: signIn, clock: clocks.wall, cookies: cookies, trustedProxies: trustedProxies),
            accessTokens: AccessTokenAPI(
                issuer: AccessTokenIssuer(
                    keys: accessTokenKeys, issuer: configuration.publicURL, audience: configuration.accessTokenAudience,
                    ttl: Int64(configuration.accessTokenTTL.components.seconds)),
                keys: accessTokenKeys, clock: clocks.wall),
            admin: configuration.adminToken != nil
                ? AdminAPI(store: store, deletion: deletion, idleTTL: idleTTL, clock: clocks.wall, trustedProxies: trustedProxies) : nil,
            pages: AccountPages(
                authenticator: authenticator, sessions: sessions, deletion: deletion, cookies: cookies, csrf: csrf, mode: signInMode,
                logger: logger, passwordForms: passwordForms, passwords: passwords, webSignIn: webSignIn, trustedProxies: trustedProxies),
            webSignIn: webSignIn, passwordForms: passwordForms, demoWebhooks: demoWebhooks,
            activity: ActivityAPI(audit: store.audit),
            adminEvents: configuration.adminToken != nil ? AdminEventsAPI(audit: store.audit) : nil,
            console: configuration.adminToken.map { token in
                ConsoleRoutes(
                    store: store,
                    gate: ConsoleGate(
                        sessions: store.consoleSessions, admin: AdminAuthenticator(token: token), csrf: csrf,
                        publicOrigin: configuration.publicOrigin, trustedProxies: trustedProxies, clock: clocks.wall),
                    deletion: deletion, keys: apple.keys,
                    webhooksConfigured: configuration.webhookURL != nil && configuration.webhookSecret != nil,
                    mailConfigured: configuration.smtpURL != nil && configuration.emailFrom != nil,
                    idleTTL: idleTTL, clock: clocks.wall)
            }
        ).table
        routeTable = table
        let admin = configuration.adminToken.map(AdminAuthenticator.init)
        let router = Routes.router(
            table, authenticator: authenticator,
            rateLimiter: configuration.rateLimit.map { ClientRateLimiter(limit: $0, clock: clocks.monotonic) }, trustedProxies: trustedProxies,
            admin: admin)
        var http = HTTPServerConfiguration(
            host: configuration.listen.host, port: configuration.listen.port, threads: configuration.threads)
        http.limits.maxBodyBytes = configuration.maxBodyBytes
        http.limits.maxConnections = configuration.maxConnections
        // A trusted proxy brings many clients over its connections: the per-address cap would
        // count them as one.
        http.isExemptFromAddressCap = { trustedProxies.contains($0) }
        let errors = ErrorResponses(logger: logger)
        let renderError: RoutingResponder.ErrorRenderer = { error, request in errors.response(for: error, request: request) }
        responder = RoutingResponder(
            router: router,
            observer: RequestLogObserver(
                metrics: metrics, trustedProxies: configuration.trustedProxies, level: configuration.logLevel,
                format: configuration.logFormat, sink: accessLogSink),
            crossOrigin: CrossOriginPolicy.siwa(origins: configuration.corsOrigins),
            renderError: admin?.hidingUnknownRoutes(renderError) ?? renderError)
        server = HTTPServer(configuration: http, responder: responder, logger: logger)
    }

    /// Starts listening; returns the bound port.
    @discardableResult
    public func start() throws -> UInt16 {
        let keys = apple.keys
        keys.loadPersisted()
        let port = try server.start()
        emailRequests.start()
        // Keys load in the background: the server answers (and /readyz says "keys") meanwhile.
        background.withLock {
            $0.append(Task {
                await keys.refresh()
                await keys.runRefreshLoop()
            })
            // Pending revocations survive restarts in the database; the worker resumes them.
            $0.append(Task { [revoker] in await revoker.run() })
            $0.append(Task { [housekeeping] in await housekeeping.run() })
            // Rotation when due, and rotations made by other instances or the command.
            $0.append(Task { [accessTokenKeys] in await accessTokenKeys.run() })
            if let refreshValidator { $0.append(Task { await refreshValidator.run() }) }
            // Events committed before a stop or a crash are in the outbox; delivery resumes.
            if let webhookDeliverer { $0.append(Task { await webhookDeliverer.run() }) }
            if let mailDeliverer { $0.append(Task { await mailDeliverer.run() }) }
        }
        logger.info("listening", metadata: [
            "address": .string(ListenAddress(host: configuration.listen.host, port: port).description),
            "public_url": .string(configuration.publicURL),
            "threads": .stringConvertible(configuration.threads),
        ])
        return port
    }

    public var port: UInt16 { server.port }

    /// Graceful stop: no new connections, requests in flight finish (bounded), then the
    /// database closes cleanly.
    public func stop() async {
        await server.stop()
        // The requests answered before the stop get their codes, within a bound.
        await emailRequests.drain()
        let tasks = background.withLock { $0 }
        tasks.forEach { $0.cancel() }
        // Workers stop at their next await; one inside a call to Apple gets a bounded wait
        // before the database closes under it.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for task in tasks { await task.value } }
            group.addTask { try? await Task.sleep(for: .seconds(2)) }
            await group.next()
            group.cancelAll()
        }
        passwordHasher.stop()
        // Revocations held while the database was away: a last chance to queue them durably.
        await revoker.queueHeld()
        if revoker.held.count > 0 {
            logger.error("revocations held in memory are lost: the database did not take them before the stop", metadata: [
                "count": .stringConvertible(revoker.held.count),
            ])
        }
        // Otherwise a session used since the last batch would look idle up to a batch early.
        do {
            try await lastSeen.flush(now: wallClock())
        } catch {
            logger.warning("could not write the sessions' last-use times at stop", metadata: ["error": "\(error)"])
        }
        store.close()
        logger.info("stopped")
        // The access lines of the last requests wait in the I/O threads' buffers: written now, so
        // a graceful stop loses none.
        accessLogSink.flush()
    }
}
