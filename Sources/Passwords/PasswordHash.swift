import WireFormat

/// scrypt's cost parameters: `N = 2^logN`, block size `r`, parallelism `p`.
public struct ScryptParameters: Sendable, Equatable, CustomStringConvertible {
    public var logN: Int
    public var r: Int
    public var p: Int

    public init(logN: Int, r: Int, p: Int) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// The one place the parameters are chosen (docs/guides/passwords-and-email.md: N ≥ 2^15, r = 8, p = 1). Raising them
    /// re-hashes each password at its next successful sign-in (`Verification.needsRehash`).
    /// 2^15 · 8 · 128 bytes = 32 MiB of memory per hash while it runs.
    public static let current = ScryptParameters(logN: 15, r: 8, p: 1)

    /// Salt and output lengths (bytes) of new hashes.
    public static let saltBytes = 16
    public static let hashBytes = 32

    /// What one hash holds in memory while it runs (OpenSSL's own count).
    public var memoryBytes: Int { 128 * r * ((1 << logN) + p + 2) }

    public var description: String { "ln=\(logN),r=\(r),p=\(p)" }
}

/// A password hash in the PHC string format
/// (https://github.com/P-H-C/phc-string-format/blob/master/phc-sf-spec.md), as passlib and
/// others write scrypt: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`, salt and hash in the spec's
/// "B64" (standard base64 alphabet, no padding). The parameters travel with the hash, so they
/// can be raised without invalidating stored passwords.
public struct PasswordHash: Sendable, Equatable, CustomStringConvertible {
    public let parameters: ScryptParameters
    public let salt: [UInt8]
    public let hash: [UInt8]

    public init(parameters: ScryptParameters, salt: [UInt8], hash: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    static let b64 = Base64(alphabet: .standard, padding: .none)

    /// The most memory a stored hash may ask of a verification (8 times today's), so a
    /// corrupted or planted row cannot make one take gigabytes or minutes.
    static let maxMemoryBytes = 256 << 20

    /// The PHC string.
    public var description: String {
        "$scrypt$\(parameters)$\(Self.b64.encode(salt))$\(Self.b64.encode(hash))"
    }

    /// Parses a PHC scrypt string; nil for anything else (another algorithm, a missing or
    /// repeated parameter, parameters out of bounds, bad base64).
    public init?(_ text: String) {
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1] == "scrypt" else { return nil }
        var values: [Substring: Int] = [:]
        for pair in fields[2].split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            // Decimal digits only, no sign or leading zero (PHC: one spelling per value).
            guard parts.count == 2, ["ln", "r", "p"].contains(parts[0]), values[parts[0]] == nil,
                  !parts[1].isEmpty, parts[1].count <= 9, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
                  parts[1] == "0" || parts[1].first != "0", let value = Int(parts[1])
            else { return nil }
            values[parts[0]] = value
        }
        guard let logN = values["ln"], let r = values["r"], let p = values["p"],
              (1...31).contains(logN), r >= 1, p >= 1
        else { return nil }
        let parameters = ScryptParameters(logN: logN, r: r, p: p)
        guard parameters.memoryBytes <= Self.maxMemoryBytes, r * p < 1 << 30,
              let salt = Self.b64.decode(String(fields[3])), let hash = Self.b64.decode(String(fields[4])),
              (8...64).contains(salt.count), (16...64).contains(hash.count)
        else { return nil }
        self.init(parameters: parameters, salt: salt, hash: hash)
    }
}
