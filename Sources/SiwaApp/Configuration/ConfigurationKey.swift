/// Every setting of docs/reference/configuration.md, by the name used in the JSON file.
public enum ConfigurationKey: String, CaseIterable, Sendable {
    case listen
    case publicURL = "public_url"
    case database
    case teamID = "team_id"
    case keyID = "key_id"
    case privateKey = "private_key"
    case privateKeyFile = "private_key_file"
    case clientIDs = "client_ids"
    case webClientID = "web_client_id"
    case redirectURI = "redirect_uri"
    case appleBaseURL = "apple_base_url"
    case appleCAFile = "apple_ca_file"
    case dataKey = "data_key"
    case sessionTTL = "session_ttl"
    case sessionIdleTTL = "session_idle_ttl"
    case requireNonce = "require_nonce"
    case refreshValidationInterval = "refresh_validation_interval"
    case allowedReturnOrigins = "allowed_return_origins"
    case corsOrigins = "cors_origins"
    case trustedProxies = "trusted_proxies"
    case logFormat = "log_format"
    case logLevel = "log_level"
    case threads
    case maxBodyBytes = "max_body_bytes"
    case revocationBackoff = "revocation_backoff"
    case revocationBackoffMax = "revocation_backoff_max"
    case maxConnections = "max_connections"
    case rateLimit = "rate_limit"
    case webhookURL = "webhook_url"
    case webhookSecret = "webhook_secret"
    case webhookBackoff = "webhook_backoff"
    case webhookRetention = "webhook_retention"
    case adminToken = "admin_token"
    case accessTokenTTL = "access_token_ttl"
    case accessTokenAudience = "access_token_audience"
    case signingKeyRotation = "signing_key_rotation"
    case allowedReturnSchemes = "allowed_return_schemes"
    case smtpURL = "smtp_url"
    case emailFrom = "email_from"
    case smtpCAFile = "smtp_ca_file"
    case emailRetention = "email_retention"
    case auditRetention = "audit_retention"

    /// `SIWA_` + the key upper-cased.
    public var environmentName: String { "SIWA_" + rawValue.uppercased() }

    /// Values never printed: not in errors, not in `summary()`.
    public var isSecret: Bool { self == .privateKey || self == .dataKey || self == .webhookSecret || self == .adminToken }
}
