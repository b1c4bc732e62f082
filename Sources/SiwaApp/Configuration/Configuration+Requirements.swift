import Accounts
extension Configuration {
    /// What `serve` cannot work without (docs/reference/configuration.md), in its order: the team's credentials and the
    /// audiences. Without any of them the server would start, listen, and fail every sign-in
    /// with no hint; `serve` ends with exit 2 naming the first instead. `demo` and tests build
    /// their own configurations and do not ask.
    public var serveProblems: [ConfigurationError] {
        var problems: [ConfigurationError] = []
        if teamID == nil { problems.append(ConfigurationError(.teamID, "is required: the Apple developer team ID (10 characters)")) }
        if keyID == nil { problems.append(ConfigurationError(.keyID, "is required: the ID of the Sign in with Apple key (10 characters)")) }
        if privateKeyPEM == nil {
            problems.append(ConfigurationError(.privateKey, "is required: the .p8 key's PEM text (or set private_key_file to its path)"))
        } else if let problem = privateKeyProblem {
            problems.append(problem)
        }
        if clientIDs.isEmpty {
            problems.append(ConfigurationError(.clientIDs, "is required: the bundle IDs and Services IDs whose identity tokens are accepted"))
        }
        return problems
    }

    /// Why the configured key cannot sign client secrets (an RSA key, garbage inside the PEM
    /// envelope), named by the key it came from; nil when it is a P-256 PKCS#8 key.
    var privateKeyProblem: ConfigurationError? {
        guard let pem = privateKeyPEM else { return nil }
        let key: ConfigurationKey = privateKeyFile == nil ? .privateKey : .privateKeyFile
        let finding = ConfigurationCheck.checkPrivateKey(pem)
        return finding.ok ? nil : ConfigurationError(key, "is not usable: \(finding.detail) (Apple's .p8 is a P-256 PKCS#8 key)")
    }
}
