import Store
extension Configuration {
    /// Every key with its effective value, in the order of docs/reference/configuration.md, for `check-config` to print.
    /// Secrets appear only as `set (N bytes)` or `not set`.
    public func summary() -> [(key: String, value: String)] {
        func optional(_ value: String?) -> String { value ?? "not set" }
        func list(_ values: [String]) -> String { values.isEmpty ? "not set" : values.joined(separator: ",") }
        func secret(_ byteCount: Int?) -> String { byteCount.map { "set (\($0) bytes)" } ?? "not set" }

        return ConfigurationKey.allCases.map { key in
            let value: String
            switch key {
            case .listen: value = listen.description
            case .publicURL: value = publicURL
            case .database: value = Store.redacted(database)
            case .teamID: value = optional(teamID)
            case .keyID: value = optional(keyID)
            case .privateKey: value = secret(privateKeyPEM?.utf8.count)
            case .privateKeyFile: value = optional(privateKeyFile)
            case .clientIDs: value = list(clientIDs)
            case .webClientID: value = optional(webClientID)
            case .redirectURI: value = redirectURI
            case .appleBaseURL: value = appleBaseURL
            case .appleCAFile: value = optional(appleCAFile)
            case .dataKey: value = secret(dataKey?.count)
            case .sessionTTL: value = DurationParser.format(sessionTTL)
            case .sessionIdleTTL: value = DurationParser.format(sessionIdleTTL)
            case .requireNonce: value = String(requireNonce)
            case .refreshValidationInterval:
                value = refreshValidationInterval == .zero ? "0 (off)" : DurationParser.format(refreshValidationInterval)
            case .allowedReturnOrigins: value = list(allowedReturnOrigins)
            case .corsOrigins: value = list(corsOrigins)
            case .trustedProxies: value = list(trustedProxies.cidrs)
            case .logFormat: value = logFormat.rawValue
            case .logLevel: value = logLevel.rawValue
            case .threads: value = String(threads)
            case .maxBodyBytes: value = String(maxBodyBytes)
            case .revocationBackoff: value = DurationParser.format(revocationBackoff)
            case .revocationBackoffMax: value = DurationParser.format(revocationBackoffMax)
            case .maxConnections: value = String(maxConnections)
            case .rateLimit: value = rateLimit?.description ?? "0 (off)"
            case .webhookURL: value = optional(webhookURL)
            case .webhookSecret: value = secret(webhookSecret?.count)
            case .webhookBackoff: value = DurationParser.format(webhookBackoff)
            case .webhookRetention: value = DurationParser.format(webhookRetention)
            case .adminToken: value = secret(adminToken?.utf8.count)
            case .accessTokenTTL: value = DurationParser.format(accessTokenTTL)
            case .accessTokenAudience: value = accessTokenAudience
            case .signingKeyRotation: value = DurationParser.format(signingKeyRotation)
            case .allowedReturnSchemes: value = list(allowedReturnSchemes)
            case .smtpURL: value = optional(smtpURL?.redacted)
            case .emailFrom: value = optional(emailFrom?.description)
            case .smtpCAFile: value = optional(smtpCAFile)
            case .emailRetention: value = DurationParser.format(emailRetention)
            case .auditRetention: value = DurationParser.format(auditRetention)
            }
            return (key.rawValue, value)
        }
    }
}
