// FoundationEssentials only: the full Foundation library adds megabytes of resident memory.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import SMTP

/// Every setting of docs/reference/configuration.md, typed and validated.
///
/// Built by `load(file:environment:isTerminal:)`. Code that makes its own configuration (`demo`,
/// tests) uses `init(settings:isTerminal:)`, which derives `redirect_uri`, `web_client_id` and
/// `allowed_return_origins` the same way; `init()` is the plain defaults, whose derived values
/// do not follow later changes to `publicURL` or `clientIDs`.
public struct Configuration: Sendable, Equatable {
    public var listen: ListenAddress
    /// Absolute http(s) URL without a trailing `/`, query or fragment.
    public var publicURL: String {
        didSet { publicOrigin = Self.origin(of: publicURL) }
    }
    /// `public_url`'s origin, `scheme://host[:port]` lower-cased with the default port dropped:
    /// what browsers send in `Origin` for our own pages. Kept in step with `publicURL`, and
    /// stored because it is compared on every cookie-authenticated request.
    public internal(set) var publicOrigin: String
    /// SQLite file path.
    public var database: String
    /// Apple developer team ID (client secret `iss`): 10 characters A-Z, 0-9.
    public var teamID: String?
    /// ID of the Sign in with Apple key (client secret `kid`): 10 characters A-Z, 0-9.
    public var keyID: String?
    /// The `.p8` key as PEM text (from `private_key`, or read from `private_key_file`).
    /// Checked only for its PEM block here; the key itself is parsed with OpenSSL where it is used.
    public var privateKeyPEM: String?
    /// The path the key was read from, when it came from `private_key_file`.
    public var privateKeyFile: String?
    /// Audiences accepted in identity tokens: bundle IDs and Services IDs, in order, no duplicates.
    public var clientIDs: [String]
    /// The Services ID of the web flow; defaults to the first of `clientIDs`.
    public var webClientID: String?
    /// The redirect URI registered with Apple, exactly as Apple must see it.
    public var redirectURI: String
    /// Where Apple's endpoints live, without a trailing `/`.
    public var appleBaseURL: String
    /// Extra CA certificates (PEM file) trusted for `appleBaseURL`.
    public var appleCAFile: String?
    /// 32 bytes that encrypt Apple tokens at rest; when nil a key file is made beside the database.
    public var dataKey: [UInt8]?
    public var sessionTTL: Duration
    public var sessionIdleTTL: Duration
    public var requireNonce: Bool
    /// `.zero` turns re-validation off.
    public var refreshValidationInterval: Duration
    /// Origins (`scheme://host[:port]`, lower-case, default port dropped) the web flow may return to.
    public var allowedReturnOrigins: [String]
    /// Web apps on other origins that may call `/api/*` and `/auth/verify` from a browser (CORS),
    /// in the form browsers send in `Origin`; empty turns CORS off.
    public var corsOrigins: [String]
    public var trustedProxies: CIDRSet
    public var logFormat: LogFormat
    public var logLevel: Logger.Level
    public var threads: Int
    public var maxBodyBytes: Int
    public var revocationBackoff: Duration
    public var revocationBackoffMax: Duration
    public var maxConnections: Int
    /// Per client address, on the routes that write for clients not signed in; nil is off.
    public var rateLimit: RateLimit?
    /// Where webhook events go (docs/guides/connecting-your-backend.md): https, or http on loopback. Set with `webhookSecret`.
    public var webhookURL: String?
    /// The Standard Webhooks secret's decoded bytes (24 to 64), the HMAC key of signatures.
    public var webhookSecret: [UInt8]?
    /// First retry delay of a failed delivery; doubles with jitter up to an hour.
    public var webhookBackoff: Duration
    /// How long a failing event is retried before it is marked failed.
    public var webhookRetention: Duration
    /// Where mail goes (docs/guides/passwords-and-email.md); nil: no mail is sent (codes go by webhook). Its password is
    /// never printed (`SMTPURL` shows itself masked).
    public var smtpURL: SMTPURL?
    /// The sender of every message; required with `smtpURL`.
    public var emailFrom: MailAddress?
    /// Extra CA certificates (PEM) trusted for the SMTP server.
    public var smtpCAFile: String?
    /// How long a message that cannot be delivered is retried before it is marked failed.
    public var emailRetention: Duration
    /// How long the audit trail keeps an event (housekeeping prunes older ones).
    public var auditRetention: Duration
    /// One delivery attempt's deadline: docs/guides/connecting-your-backend.md's 10 s. Not a configuration key; tests that
    /// must tell "during an attempt" from "after it" on a loaded machine lengthen it.
    public var webhookAttemptDeadline: Duration = .seconds(10)
    /// How long a SQLite write waits for a lock another process holds before the request is
    /// answered 503 `database_unavailable`; nil is the store's 5 s. Not a configuration key;
    /// tests that hold the lock shorten it.
    public var databaseBusyTimeout: Duration?
    /// One call to Apple's deadline: docs/reference/http-api.md's 10 s in all. Not a configuration key; tests
    /// that hold Apple's answer while they look at the server lengthen it.
    public var appleCallDeadline: Duration = .seconds(10)
    /// Turns on `/admin/*`: at least 32 characters, compared in constant time.
    public var adminToken: String?
    /// Lifetime of access tokens from `POST /api/token`, at most an hour.
    public var accessTokenTTL: Duration
    /// `aud` of access tokens; nil is `publicURL`.
    public var accessTokenAudienceSetting: String?
    /// How often the access-token signing key is replaced.
    public var signingKeyRotation: Duration
    /// App URL schemes (lower-case) the web flow may return to with a one-time code.
    public var allowedReturnSchemes: [String]

    public static let defaultPublicURL = "http://localhost:8080"
    public static let defaultAppleBaseURL = "https://appleid.apple.com"
    public static let defaultDatabase = "data/siwa.sqlite3"
    public static let defaultFile = "Config/siwa.json"
    public static let maximumThreads = 256
    public static let maximumBodyBytes = 64 * 1024 * 1024
    public static let maximumConnections = 1_000_000
    public static let maximumAccessTokenTTL = Duration.seconds(3_600)
    /// At most 25 keys in the JWKS (a day of replaced ones, and the current one).
    public static let minimumSigningKeyRotation = Duration.seconds(3_600)
    /// Schemes that would turn a return to an app into one to a web page or into script.
    public static let forbiddenReturnSchemes: Set<String> = ["http", "https", "javascript", "data", "file", "vbscript", "blob"]

    /// `aud` of access tokens: `access_token_audience`, else `public_url`.
    public var accessTokenAudience: String { accessTokenAudienceSetting ?? publicURL }

    /// The defaults of docs/reference/configuration.md, as for a process whose output is not a terminal.
    public init() {
        listen = ListenAddress(host: "127.0.0.1", port: 8080)
        publicURL = Self.defaultPublicURL
        publicOrigin = Self.origin(of: Self.defaultPublicURL)
        database = Self.defaultDatabase
        teamID = nil
        keyID = nil
        privateKeyPEM = nil
        privateKeyFile = nil
        clientIDs = []
        webClientID = nil
        redirectURI = Self.defaultPublicURL + "/auth/apple/callback"
        appleBaseURL = Self.defaultAppleBaseURL
        appleCAFile = nil
        dataKey = nil
        sessionTTL = .seconds(30 * 86_400)
        sessionIdleTTL = .seconds(7 * 86_400)
        requireNonce = true
        refreshValidationInterval = .seconds(86_400)
        allowedReturnOrigins = ["http://localhost:8080"]
        corsOrigins = []
        trustedProxies = CIDRSet()
        logFormat = .json
        logLevel = .info
        threads = Self.defaultThreads
        maxBodyBytes = 1_048_576
        revocationBackoff = .seconds(5)
        revocationBackoffMax = .seconds(3_600)
        maxConnections = 10_000
        rateLimit = RateLimit(requests: 600, perSeconds: 60)
        webhookURL = nil
        webhookSecret = nil
        webhookBackoff = .seconds(5)
        webhookRetention = .seconds(3 * 86_400)
        smtpURL = nil
        emailFrom = nil
        smtpCAFile = nil
        emailRetention = .seconds(86_400)
        auditRetention = .seconds(180 * 86_400)
        adminToken = nil
        accessTokenTTL = .seconds(300)
        accessTokenAudienceSetting = nil
        signingKeyRotation = .seconds(30 * 86_400)
        allowedReturnSchemes = []
    }

    /// One I/O thread per active processor, within 1...256.
    public static var defaultThreads: Int {
        min(max(ProcessInfo.processInfo.activeProcessorCount, 1), maximumThreads)
    }

    private static func origin(of url: String) -> String {
        (try? SettingURL.parse(url).origin) ?? url
    }
}
