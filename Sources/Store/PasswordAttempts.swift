import OpenSSLCrypto
import SQLRow

/// The failed-password counters of docs/guides/passwords-and-email.md: 5 failures for one email, or 20 from one client
/// address, within 15 minutes, and further attempts are refused until the window passes. The
/// counts live in the database (`password_attempts`), so every instance on PostgreSQL shares
/// one limit instead of each allowing its own five.
///
/// An email's attempt is counted before its password is checked (`reserve`), in one statement
/// that also reads the count, so concurrent guesses at one account cannot all slip under its
/// five while their hashes run; a success takes it back (`release` resets the email's count).
/// An address's count is only read then, and grows by its failures (`recordFailure`): many
/// people behind one address signing in at once are not failures, and the hashing pool bounds
/// how many guesses can be in flight past the twentieth.
public enum PasswordAttempts {
    public static let window: Int64 = 15 * 60
    public static let perEmail: Int64 = 5
    public static let perAddress: Int64 = 20

    /// The counters one attempt touches: SHA-256 of what they count, so the table holds no
    /// email (an unknown email is counted too) and no address.
    public struct Keys: Sendable, Equatable {
        public let email: [UInt8]
        public let address: [UInt8]?

        /// `email` is normalized here; `address` is the client address rate limits use.
        public init(email: String, address: String?) {
            self.email = SHA256.hash("email\u{0}" + EmailAddress.normalized(email))
            self.address = address.map { SHA256.hash("address\u{0}" + $0) }
        }
    }

    public enum Check: Sendable, Equatable {
        case allowed
        /// Over a limit: nothing was counted; try again after this many seconds.
        case refused(retryAfter: Int64)
    }

    private struct OverLimit: Error {
        let retryAfter: Int64
    }

    /// Counts one attempt against the email, and checks the address's failures; over a limit
    /// it throws `OverLimit`, and the caller's transaction rolls back, so nothing is counted.
    private static func reserve(_ keys: Keys, now: Int64, in connection: any SQLConnection) throws {
        try count(keys.email, limit: perEmail, now: now, in: connection)
        if let address = keys.address,
           let row = try connection.queryOne("SELECT failures, window_ends_at FROM password_attempts WHERE key = ?", [.blob(address)])
        {
            let ends = try row.int64("window_ends_at")
            if ends > now, try row.int64("failures") >= perAddress { throw OverLimit(retryAfter: max(1, ends - now)) }
        }
    }

    /// The password was wrong: the address counts one more failure (the email's was counted
    /// by `reserve`).
    static func recordFailure(_ keys: Keys, now: Int64, in connection: any SQLConnection) throws {
        if let address = keys.address { try count(address, limit: .max, now: now, in: connection) }
    }

    /// The attempt succeeded: the email's failures are forgotten.
    static func release(_ keys: Keys, in connection: any SQLConnection) throws {
        try connection.run("DELETE FROM password_attempts WHERE key = ?", [.blob(keys.email)])
    }

    /// The attempt was never made (the password could not be checked): the email's count loses it.
    static func uncount(_ keys: Keys, in connection: any SQLConnection) throws {
        try connection.run("UPDATE password_attempts SET failures = failures - 1 WHERE key = ? AND failures > 0", [.blob(keys.email)])
    }

    /// Forgets an email's failures (its password was just reset).
    static func forget(email: String, in connection: any SQLConnection) throws {
        try connection.run("DELETE FROM password_attempts WHERE key = ?", [.blob(Keys(email: email, address: nil).email)])
    }

    /// One more failure in the counter's window (a new window when the last one is over).
    private static func count(_ key: [UInt8], limit: Int64, now: Int64, in connection: any SQLConnection) throws {
        let ends = now + window
        let row = try connection.queryOne(
            """
            INSERT INTO password_attempts(key, failures, window_ends_at) VALUES (?, 1, ?)
            ON CONFLICT(key) DO UPDATE SET
                failures = CASE WHEN password_attempts.window_ends_at <= ? THEN 1 ELSE password_attempts.failures + 1 END,
                window_ends_at = CASE WHEN password_attempts.window_ends_at <= ? THEN ? ELSE password_attempts.window_ends_at END
            RETURNING failures, window_ends_at
            """,
            [.blob(key), .integer(ends), .integer(now), .integer(now), .integer(ends)])
        guard let row else { return }
        if try row.int64("failures") > limit {
            throw OverLimit(retryAfter: max(1, try row.int64("window_ends_at") - now))
        }
    }

    static func prune(in connection: any SQLConnection, now: Int64) throws -> Int {
        try connection.run("DELETE FROM password_attempts WHERE window_ends_at <= ?", [.integer(now)])
    }

    /// `reserve` as one transaction of its own.
    static func reserve(_ keys: Keys, now: Int64, engine: any StoreEngine) async throws -> Check {
        do {
            try await engine.write { try reserve(keys, now: now, in: $0) }
            return .allowed
        } catch let over as OverLimit {
            return .refused(retryAfter: over.retryAfter)
        }
    }
}
