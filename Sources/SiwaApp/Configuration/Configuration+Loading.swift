// FoundationEssentials only: the full Foundation library adds megabytes of resident memory.
#if canImport(FoundationEssentials)
import Accounts
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import SMTP
import Store
import WireFormat

extension Configuration {
    /// Reads the JSON file, then lets every `SIWA_<KEY>` environment variable override it, and
    /// validates the result.
    ///
    /// - Parameters:
    ///   - file: the `--config` path; when nil, `Config/siwa.json` is read if it exists.
    ///   - environment: the process environment (passed in, so tests never touch the real one).
    ///   - isTerminal: whether stdout is a terminal, which picks the default `log_format`.
    public static func load(
        file: String?, environment: [String: String], isTerminal: Bool
    ) throws(ConfigurationError) -> Configuration {
        var values = try fileSettings(file)
        for key in ConfigurationKey.allCases {
            if let value = environment[key.environmentName] { values[key] = .string(value) }
        }
        return try Configuration(reading: SettingsReader(values: values), isTerminal: isTerminal)
    }

    /// For `check-config`, which reports every problem rather than the first (docs/reference/configuration.md): a
    /// setting that fails is reported and then read as if it were absent, so the settings after
    /// it are still checked. The configuration is nil only when a problem cannot be set aside
    /// that way (one that names no setting given).
    public static func loadReportingProblems(
        file: String?, environment: [String: String], isTerminal: Bool
    ) -> (configuration: Configuration?, problems: [ConfigurationError]) {
        var problems: [ConfigurationError] = []
        var values: [ConfigurationKey: RawSetting]
        do {
            values = try fileSettings(file, unknownKeys: &problems)
        } catch {
            problems.append(error)
            values = [:]
        }
        for key in ConfigurationKey.allCases {
            if let value = environment[key.environmentName] { values[key] = .string(value) }
        }
        // Each round removes one setting, so this ends.
        while true {
            do {
                return (try Configuration(reading: SettingsReader(values: values), isTerminal: isTerminal), problems)
            } catch {
                problems.append(error)
                guard let key = ConfigurationKey(rawValue: error.key), values.removeValue(forKey: key) != nil else {
                    return (nil, problems)
                }
            }
        }
    }

    /// A configuration from settings keyed by their JSON names (`"listen": "127.0.0.1:0"`), with
    /// no file and no environment: for `demo` and tests that build one in code. Validated, and
    /// unknown keys refused, exactly as in a file.
    public init(settings: [String: String], isTerminal: Bool) throws(ConfigurationError) {
        var values: [ConfigurationKey: RawSetting] = [:]
        for (name, value) in settings.sorted(by: { $0.key < $1.key }) {
            guard let key = ConfigurationKey(rawValue: name) else {
                throw ConfigurationError(key: name, problem: "is not a known setting")
            }
            values[key] = .string(value)
        }
        try self.init(reading: SettingsReader(values: values), isTerminal: isTerminal)
    }

    /// The log format to use even when the configuration fails to load, so the line reporting
    /// that failure already has the format the operator asked for.
    public static func bestEffortLogFormat(
        file: String?, environment: [String: String], isTerminal: Bool
    ) -> LogFormat {
        if let text = environment[ConfigurationKey.logFormat.environmentName],
           let format = LogFormat(rawValue: text.trimmedSetting.lowercased()) {
            return format
        }
        if let values = try? fileSettings(file), case .string(let text)? = values[.logFormat],
           let format = LogFormat(rawValue: text.trimmedSetting.lowercased()) {
            return format
        }
        return .default(isTerminal: isTerminal)
    }

    private static func fileSettings(_ file: String?) throws(ConfigurationError) -> [ConfigurationKey: RawSetting] {
        var unknownKeys: [ConfigurationError] = []
        let settings = try fileSettings(file, unknownKeys: &unknownKeys)
        if let first = unknownKeys.first { throw first }
        return settings
    }

    /// The file's settings; keys it does not know go to `unknownKeys` instead of failing.
    private static func fileSettings(
        _ file: String?, unknownKeys: inout [ConfigurationError]
    ) throws(ConfigurationError) -> [ConfigurationKey: RawSetting] {
        if let file { return try RawSetting.readFile(file, unknownKeys: &unknownKeys) }
        if FileManager.default.fileExists(atPath: defaultFile) { return try RawSetting.readFile(defaultFile, unknownKeys: &unknownKeys) }
        return [:]
    }

    // Keys are read in the reference's order (docs/reference/configuration.md), so the first problem reported is the same on every run.
    private init(reading reader: SettingsReader, isTerminal: Bool) throws(ConfigurationError) {
        self.init()

        if let text = try reader.string(.listen) { listen = try ListenAddress.parse(text) }

        if let text = try reader.string(.publicURL) {
            let url = try Self.url(text, key: .publicURL)
            guard url.query == nil, url.fragment == nil else {
                throw ConfigurationError(.publicURL, "\(ConfigurationError.quote(text)) must not have a query or fragment")
            }
            publicURL = Self.droppingTrailingSlashes(text)
            publicOrigin = url.origin  // observers do not run inside an initializer
        }

        if let text = try reader.string(.database) {
            // A NUL would silently cut the path short at the C boundary.
            guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw ConfigurationError(.database, "\(ConfigurationError.quote(Store.redacted(text))) contains control characters")
            }
            database = text
        }

        teamID = try Self.appleIdentifier(reader, .teamID)
        keyID = try Self.appleIdentifier(reader, .keyID)

        let inlineKey = try reader.string(.privateKey)
        privateKeyFile = try reader.string(.privateKeyFile)
        if let path = privateKeyFile {
            guard inlineKey == nil else {
                throw ConfigurationError(.privateKeyFile, "cannot be used together with private_key; set only one")
            }
            let text = try Self.readText(path, key: .privateKeyFile)
            try Self.checkPrivateKeyPEM(text, key: .privateKeyFile)
            privateKeyPEM = text
        } else if var text = inlineKey {
            // Environment files often carry a PEM on one line with literal "\n" separators;
            // OpenSSL needs real line breaks.
            if !text.contains("\n") { text = text.replacing("\\n", with: "\n") }
            try Self.checkPrivateKeyPEM(text, key: .privateKey)
            privateKeyPEM = text
        }

        if let ids = try reader.list(.clientIDs) {
            if let bad = ids.first(where: { id in id.unicodeScalars.contains { $0.properties.isWhitespace || $0.value < 0x20 } }) {
                throw ConfigurationError(.clientIDs, "\(ConfigurationError.quote(bad)) contains spaces or control characters")
            }
            clientIDs = ids
        }
        webClientID = clientIDs.first
        if let id = try reader.string(.webClientID) {
            // Apple puts the Services ID in the web flow's identity token `aud`; one missing from
            // client_ids would make every web sign-in fail as wrong_audience.
            guard clientIDs.isEmpty || clientIDs.contains(id) else {
                throw ConfigurationError(.webClientID, "\(ConfigurationError.quote(id)) is not one of client_ids")
            }
            webClientID = id
        }

        redirectURI = publicURL + "/auth/apple/callback"
        if let text = try reader.string(.redirectURI) {
            let url = try Self.url(text, key: .redirectURI)
            guard url.fragment == nil else {
                throw ConfigurationError(.redirectURI, "\(ConfigurationError.quote(text)) must not have a fragment")
            }
            redirectURI = text
        }

        if let text = try reader.string(.appleBaseURL) {
            let url = try Self.url(text, key: .appleBaseURL)
            guard url.query == nil, url.fragment == nil else {
                throw ConfigurationError(.appleBaseURL, "\(ConfigurationError.quote(text)) must not have a query or fragment")
            }
            // Tokens and codes travel to this URL: plain http is only safe when it never leaves the host.
            guard url.scheme == "https" || url.isLoopback else {
                throw ConfigurationError(.appleBaseURL, "\(ConfigurationError.quote(text)) must use https (http is allowed only for localhost, 127.0.0.0/8 and [::1])")
            }
            appleBaseURL = Self.droppingTrailingSlashes(text)
        }

        if let path = try reader.string(.appleCAFile) {
            let text = try Self.readText(path, key: .appleCAFile)
            guard text.contains("-----BEGIN CERTIFICATE-----") else {
                throw ConfigurationError(.appleCAFile, "\(ConfigurationError.quote(path)) contains no -----BEGIN CERTIFICATE----- block")
            }
            appleCAFile = path
        }

        if let text = try reader.string(.dataKey) {
            // Never echo the value: say only what shape it has.
            // Standard or URL-safe, padding optional: keys get pasted from either kind of tool.
            guard let bytes = Base64(alphabet: .standardOrURL, padding: .optional).decode(text) else {
                throw ConfigurationError(.dataKey, "is not valid base64 (make one with: openssl rand -base64 32)")
            }
            guard bytes.count == 32 else {
                throw ConfigurationError(.dataKey, "must decode to exactly 32 bytes, not \(bytes.count) (make one with: openssl rand -base64 32)")
            }
            dataKey = bytes
        }

        sessionTTL = try Self.positive(reader, .sessionTTL) ?? sessionTTL
        // docs/reference/configuration.md: the idle TTL defaults to 7d, or to session_ttl when that is shorter (so
        // `session_ttl=3s` alone starts); one set longer than session_ttl is allowed, and the
        // shorter wins, since a session ends at whichever comes first anyway.
        sessionIdleTTL = min(try Self.positive(reader, .sessionIdleTTL) ?? sessionIdleTTL, sessionTTL)

        requireNonce = try reader.bool(.requireNonce) ?? requireNonce
        refreshValidationInterval = try reader.duration(.refreshValidationInterval) ?? refreshValidationInterval

        allowedReturnOrigins = [publicOrigin]
        if let origins = try reader.list(.allowedReturnOrigins) {
            var normalized: [String] = []
            for text in origins {
                let problem = "\(ConfigurationError.quote(text)) is not an origin (scheme://host[:port], no path)"
                guard let url = try? SettingURL.parse(text) else {
                    throw ConfigurationError(.allowedReturnOrigins, problem)
                }
                guard url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil else {
                    throw ConfigurationError(.allowedReturnOrigins, problem)
                }
                if !normalized.contains(url.origin) { normalized.append(url.origin) }
            }
            allowedReturnOrigins = normalized
        }
        if let origins = try reader.list(.corsOrigins) {
            corsOrigins = try Self.corsOrigins(origins)
        }

        if let cidrs = try reader.list(.trustedProxies) {
            do {
                trustedProxies = try CIDRSet(cidrs: cidrs)
            } catch {
                throw ConfigurationError(.trustedProxies, "\(ConfigurationError.quote(error.text)) is not a CIDR (e.g. 10.0.0.0/8, ::1/128, or one address)")
            }
        }

        logFormat = .default(isTerminal: isTerminal)
        if let text = try reader.string(.logFormat) {
            guard let format = LogFormat(rawValue: text.lowercased()) else {
                throw ConfigurationError(.logFormat, "\(ConfigurationError.quote(text)) is not a log format (use text or json)")
            }
            logFormat = format
        }
        if let text = try reader.string(.logLevel) {
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError(.logLevel, "\(ConfigurationError.quote(text)) is not a log level (use \(names))")
            }
            logLevel = level
        }

        threads = try reader.integer(.threads, in: 1...Self.maximumThreads) ?? threads
        maxBodyBytes = try reader.integer(.maxBodyBytes, in: 1...Self.maximumBodyBytes) ?? maxBodyBytes
        maxConnections = try reader.integer(.maxConnections, in: 1...Self.maximumConnections) ?? maxConnections
        if let rate = try reader.rate(.rateLimit) { rateLimit = rate }

        revocationBackoff = try Self.positive(reader, .revocationBackoff) ?? revocationBackoff
        revocationBackoffMax = try Self.positive(reader, .revocationBackoffMax) ?? revocationBackoffMax
        guard revocationBackoffMax >= revocationBackoff else {
            throw ConfigurationError(.revocationBackoffMax, "must not be shorter than revocation_backoff (\(DurationParser.format(revocationBackoff)))")
        }
        try applyIntegration(reader)
    }

    /// docs/guides/connecting-your-backend.md's settings: webhooks, the admin token, access tokens, returns to apps.
    private mutating func applyIntegration(_ reader: SettingsReader) throws(ConfigurationError) {
        if let text = try reader.string(.webhookURL) {
            let url = try Self.url(text, key: .webhookURL)
            guard url.scheme == "https" || url.isLoopback else {
                throw ConfigurationError(.webhookURL, "\(ConfigurationError.quote(text)) must use https (http is allowed only for localhost, 127.0.0.0/8 and [::1])")
            }
            webhookURL = text
        }
        if let text = try reader.string(.webhookSecret) {
            // Never echo the value: say only what shape it has.
            let problem = "must be whsec_ followed by base64 of 24 to 64 random bytes (make one with: echo whsec_$(openssl rand -base64 32))"
            guard text.hasPrefix("whsec_"), let bytes = Base64(alphabet: .standard, padding: .optional).decode(String(text.dropFirst(6))) else {
                throw ConfigurationError(.webhookSecret, problem)
            }
            guard (24...64).contains(bytes.count) else { throw ConfigurationError(.webhookSecret, problem + ", not \(bytes.count) bytes") }
            webhookSecret = bytes
        }
        if webhookURL != nil && webhookSecret == nil {
            throw ConfigurationError(.webhookSecret, "is required with webhook_url (events are always signed)")
        }
        if webhookSecret != nil && webhookURL == nil {
            throw ConfigurationError(.webhookURL, "is required with webhook_secret")
        }
        webhookBackoff = try Self.positive(reader, .webhookBackoff) ?? webhookBackoff
        webhookRetention = try Self.positive(reader, .webhookRetention) ?? webhookRetention

        if let token = try reader.string(.adminToken) {
            guard token.count >= 32 else {
                throw ConfigurationError(.adminToken, "must be at least 32 characters (make one with: openssl rand -base64 32)")
            }
            adminToken = token
        }

        accessTokenTTL = try Self.positive(reader, .accessTokenTTL) ?? accessTokenTTL
        guard accessTokenTTL <= Self.maximumAccessTokenTTL else {
            throw ConfigurationError(.accessTokenTTL, "must be at most 1h (services that must see a sign-out sooner use /auth/verify)")
        }
        if let audience = try reader.string(.accessTokenAudience) {
            guard !audience.isEmpty, !audience.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw ConfigurationError(.accessTokenAudience, "must be a non-empty string without control characters")
            }
            accessTokenAudienceSetting = audience
        }
        signingKeyRotation = try Self.positive(reader, .signingKeyRotation) ?? signingKeyRotation
        guard signingKeyRotation >= Self.minimumSigningKeyRotation else {
            // A replaced key stays published for a day: shorter rotations pile keys into the
            // JWKS every verifier downloads, and a key must be published before it signs.
            throw ConfigurationError(.signingKeyRotation, "must be at least 1h")
        }

        if let schemes = try reader.list(.allowedReturnSchemes) {
            var accepted: [String] = []
            for text in schemes {
                let scheme = text.lowercased()
                // RFC 3986 §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
                let bytes = Array(scheme.utf8)
                let valid = bytes.first.map { (0x61...0x7A).contains($0) } == true
                    && bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }
                guard valid else {
                    throw ConfigurationError(.allowedReturnSchemes, "\(ConfigurationError.quote(text)) is not a URL scheme (e.g. com.example.app)")
                }
                guard !Self.forbiddenReturnSchemes.contains(scheme) else {
                    throw ConfigurationError(
                        .allowedReturnSchemes, "\(ConfigurationError.quote(text)) is never accepted: returns go to an app's own scheme, not to a web page or script")
                }
                if !accepted.contains(scheme) { accepted.append(scheme) }
            }
            allowedReturnSchemes = accepted
        }
        try applyMail(reader)
    }

    /// docs/guides/passwords-and-email.md's settings. The URL is never quoted in an error: it may hold the SMTP password.
    private mutating func applyMail(_ reader: SettingsReader) throws(ConfigurationError) {
        if let text = try reader.string(.smtpURL) {
            do {
                smtpURL = try SMTPURL(text)
            } catch {
                throw ConfigurationError(.smtpURL, "\(error.description) (e.g. smtp://user:password@mail.example.com or smtps://mail.example.com:465)")
            }
        }
        if let text = try reader.string(.emailFrom) {
            do {
                emailFrom = try MailAddress(parsing: text)
            } catch {
                throw ConfigurationError(.emailFrom, "\(ConfigurationError.quote(text)) must be Name <address@domain> or address@domain")
            }
        }
        if smtpURL != nil && emailFrom == nil {
            throw ConfigurationError(.emailFrom, "is required with smtp_url (Name <address@domain> or address@domain)")
        }
        if let path = try reader.string(.smtpCAFile) {
            let text = try Self.readText(path, key: .smtpCAFile)
            guard text.contains("-----BEGIN CERTIFICATE-----") else {
                throw ConfigurationError(.smtpCAFile, "\(ConfigurationError.quote(path)) contains no -----BEGIN CERTIFICATE----- block")
            }
            smtpCAFile = path
        }
        emailRetention = try Self.positive(reader, .emailRetention) ?? emailRetention
        auditRetention = try Self.positive(reader, .auditRetention) ?? auditRetention
    }

    /// Each listed page may read what a signed-in person's browser gets back, cookie included:
    /// no wildcard, and plain http only where it never leaves the host.
    private static func corsOrigins(_ texts: [String]) throws(ConfigurationError) -> [String] {
        var normalized: [String] = []
        for text in texts {
            guard text != "*" else {
                throw ConfigurationError(.corsOrigins, "\"*\" is not accepted: list each web app's origin (e.g. https://app.example.com)")
            }
            let problem = "\(ConfigurationError.quote(text)) is not an origin (scheme://host[:port], no path)"
            guard let url = try? SettingURL.parse(text), url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil else {
                throw ConfigurationError(.corsOrigins, problem)
            }
            guard url.scheme == "https" || url.isLoopback else {
                throw ConfigurationError(.corsOrigins, "\(ConfigurationError.quote(text)) must use https (http is allowed only for localhost, 127.0.0.0/8 and [::1])")
            }
            if !normalized.contains(url.origin) { normalized.append(url.origin) }
        }
        return normalized
    }

    private static func url(_ text: String, key: ConfigurationKey) throws(ConfigurationError) -> SettingURL {
        do {
            return try SettingURL.parse(text)
        } catch {
            throw ConfigurationError(key, "\(ConfigurationError.quote(text)) \(error.message)")
        }
    }

    private static func droppingTrailingSlashes(_ text: String) -> String {
        var text = Substring(text)
        while text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }

    /// Team and key IDs are 10 upper-case letters and digits, as Apple's developer portal shows them.
    private static func appleIdentifier(_ reader: SettingsReader, _ key: ConfigurationKey) throws(ConfigurationError) -> String? {
        guard let text = try reader.string(key) else { return nil }
        let valid = text.utf8.count == 10 && text.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
        guard valid else { throw ConfigurationError(key, "must be 10 characters (A-Z, 0-9)") }
        return text
    }

    private static func positive(_ reader: SettingsReader, _ key: ConfigurationKey) throws(ConfigurationError) -> Duration? {
        guard let duration = try reader.duration(key) else { return nil }
        guard duration > .zero else { throw ConfigurationError(key, "must be longer than 0") }
        return duration
    }

    /// Checks the PEM envelope only, and never repeats the content: it is a private key.
    private static func checkPrivateKeyPEM(_ text: String, key: ConfigurationKey) throws(ConfigurationError) {
        if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            throw ConfigurationError(key, "holds an encrypted key; use the unencrypted .p8 key Apple gives")
        }
        if text.contains("-----BEGIN EC PRIVATE KEY-----") {
            throw ConfigurationError(key, "holds an EC PRIVATE KEY (SEC1); convert it with: openssl pkcs8 -topk8 -nocrypt")
        }
        guard let begin = text.firstRange(of: "-----BEGIN PRIVATE KEY-----"),
              text[begin.upperBound...].contains("-----END PRIVATE KEY-----")
        else {
            throw ConfigurationError(key, "contains no -----BEGIN PRIVATE KEY----- block (expected the PEM text of Apple's .p8 key)")
        }
    }

    private static func readText(_ path: String, key: ConfigurationKey) throws(ConfigurationError) -> String {
        let shown = ConfigurationError.quote(path)
        switch FileKind.of(path) {
        case .missing: throw ConfigurationError(key, "cannot read \(shown): no such file")
        case .directory: throw ConfigurationError(key, "cannot read \(shown): it is a directory")
        case .file: break
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(key, "cannot read \(shown): permission denied")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(key, "cannot read \(shown): it is not UTF-8 text")
        }
        return text
    }
}
