extension PostgresConnection {
    /// Runs `body` holding the session-level advisory lock `key`, waiting for it as long as
    /// another session holds it (for migrations, which must run once however many instances
    /// start together). The lock belongs to this connection: it is released after `body`, or by
    /// the server if the connection breaks first.
    @discardableResult
    public func withAdvisoryLock<T>(_ key: Int64, _ body: (PostgresConnection) throws -> T) throws -> T {
        try run("SELECT pg_advisory_lock($1)", [.integer(key)])
        defer { _ = try? unlockAdvisoryLock(key) }
        return try body(self)
    }

    /// Takes the advisory lock `key` if no other session holds it; true when taken.
    public func tryAdvisoryLock(_ key: Int64) throws -> Bool {
        try queryOne("SELECT pg_try_advisory_lock($1)", [.integer(key)])?.bool(0) == true
    }

    /// Releases one hold of the advisory lock `key`; false when this session did not hold it.
    @discardableResult
    public func unlockAdvisoryLock(_ key: Int64) throws -> Bool {
        try queryOne("SELECT pg_advisory_unlock($1)", [.integer(key)])?.bool(0) == true
    }

    /// A lock key from a name (FNV-1a, 64 bits), the same in every process and version, so that
    /// instances agree on `advisoryLockKey("siwa-migrations")` without a table of numbers.
    public static func advisoryLockKey(_ name: String) -> Int64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return Int64(bitPattern: hash)
    }
}
