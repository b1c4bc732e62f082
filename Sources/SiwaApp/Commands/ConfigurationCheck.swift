import Accounts
import OpenSSLCrypto
import Store

/// `check-config`: everything it could verify, as lines for a person, and whether all is well.
public struct ConfigurationCheck: Sendable {
    public struct Finding: Sendable, Equatable {
        public let key: String
        public let ok: Bool
        public let detail: String
    }

    public let findings: [Finding]

    public var allWell: Bool { findings.allSatisfy(\.ok) }

    /// - Parameters:
    ///   - configuration: what could be read; nil when reading it failed past recovery.
    ///   - problems: every setting that could not be read (`Configuration.loadReportingProblems`),
    ///     reported first; a setting already named there is not reported again as missing.
    public init(_ configuration: Configuration?, problems: [ConfigurationError] = []) {
        var findings = problems.map { Finding(key: $0.key, ok: false, detail: $0.problem) }
        let named = Set(problems.map(\.key))
        func require(_ key: String, _ present: Bool, _ detail: String) {
            guard !named.contains(key) else { return }
            findings.append(Finding(key: key, ok: present, detail: present ? detail : "missing: Sign in with Apple needs it"))
        }
        if let configuration {
            require("team_id", configuration.teamID != nil, "present")
            require("key_id", configuration.keyID != nil, "present")
            if let pem = configuration.privateKeyPEM {
                findings.append(Self.checkPrivateKey(pem))
            } else if !named.contains("private_key_file") {
                require("private_key", false, "")
            }
            require("client_ids", !configuration.clientIDs.isEmpty, "\(configuration.clientIDs.count) client id(s)")
            findings.append(Self.checkDatabase(configuration.database))
        }
        self.findings = findings
    }

    /// The key parses as PKCS#8 P-256 and signs: what Apple needs for the client secret.
    static func checkPrivateKey(_ pem: String) -> Finding {
        do {
            let key = try P256PrivateKey(pem: pem)
            let probe = Array("siwa-server check-config".utf8)
            guard key.publicKey.verifyES256(signature: try key.signES256(probe), message: probe) else {
                return Finding(key: "private_key", ok: false, detail: "the key does not produce verifiable signatures")
            }
            return Finding(key: "private_key", ok: true, detail: "PKCS#8 P-256 key, signs ES256")
        } catch {
            // The reason comes from OpenSSL and never contains key material.
            return Finding(key: "private_key", ok: false, detail: "\(error)")
        }
    }

    /// The database opens, takes a write lock, and holds a schema this build understands.
    static func checkDatabase(_ path: String) -> Finding {
        let (ok, detail) = Store.inspect(path: path)
        return Finding(key: "database", ok: ok, detail: detail)
    }

    /// The report `check-config` prints: the effective settings (secrets masked), then findings.
    public func report(summary: [(key: String, value: String)]) -> String {
        var lines = ["settings:"]
        for (key, value) in summary { lines.append("  \(key) = \(value)") }
        if summary.isEmpty { lines.append("  (not read: see the problems below)") }
        lines.append("checks:")
        for finding in findings { lines.append("  \(finding.ok ? "ok  " : "FAIL") \(finding.key): \(finding.detail)") }
        lines.append(allWell ? "configuration is valid" : "configuration has problems")
        return lines.joined(separator: "\n")
    }
}
