import Accounts
import Glibc
import Logging
import OpenSSLCrypto
import Store

/// The key that seals Apple's tokens at rest (docs/reference/configuration.md `data_key`). When the configuration has
/// none, a random one is kept in `data.key` beside the database, created with mode 0600 — and a
/// warning says so, since a key stored next to the data it protects guards only against a
/// leaked copy of the database file alone.
enum DataKeyFile {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func key(for configuration: Configuration, logger: Logger) throws(Failure) -> [UInt8] {
        if let key = configuration.dataKey { return key }
        // Instances sharing a PostgreSQL database must seal with one key; a file on each
        // machine would differ.
        if Store.isPostgres(configuration.database) {
            throw Failure(description: "data_key must be set when database is PostgreSQL: every instance seals with the same key")
        }
        let path = folder(of: configuration.database) + "/data.key"
        if let existing = FileBytes.read(path, limit: 1024) {
            guard existing.count == AESGCM.keyBytes else {
                throw Failure(description: "\(path) holds \(existing.count) bytes, not a 32-byte key")
            }
            return existing
        }
        let key = SecureRandom.bytes(AESGCM.keyBytes)
        // O_EXCL: two processes starting at once must not each write a different key.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            if errno == EEXIST, let existing = FileBytes.read(path, limit: 1024), existing.count == AESGCM.keyBytes { return existing }
            throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let written = key.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == key.count, fsync(fd) == 0 else {
            unlink(path)
            throw Failure(description: "cannot write \(path)")
        }
        logger.warning("no data_key configured: created a key file beside the database; set data_key to keep the key elsewhere", metadata: [
            "path": .string(path),
        ])
        return key
    }

    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
