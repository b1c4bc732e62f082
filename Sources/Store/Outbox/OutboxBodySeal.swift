import OpenSSLCrypto
import WireFormat

/// A body that carries a secret waits in its outbox sealed with `data_key`: a code is a
/// credential, and the database keeps only its hash, so a copy of the database (a backup, a
/// replica) must not hold a live code while its row waits for a receiver or a mail server
/// that is down. Other bodies hold nothing the users table does not, and stay readable.
enum OutboxBodySeal {
    /// Marks a sealed body; a stored body is JSON and starts with `{`.
    static let prefix = "sealed:"

    static func seal(_ body: String, id: String, table: OutboxTable, with cipher: AESGCM) throws -> String {
        prefix + Base64.url.encode(try cipher.seal(Array(body.utf8), associatedData: associatedData(id: id, table: table)))
    }

    /// The body as it was written; nil for a sealed body that does not open (another
    /// `data_key`, an altered row, or no key at hand).
    static func open(_ stored: String, id: String, table: OutboxTable, with cipher: AESGCM?) -> String? {
        guard stored.hasPrefix(prefix) else { return stored }
        guard let cipher, let sealed = Base64.url.decode(stored.utf8.dropFirst(prefix.utf8.count)),
              let body = try? cipher.open(sealed, associatedData: associatedData(id: id, table: table))
        else { return nil }
        return String(decoding: body, as: UTF8.self)
    }

    /// Binds the sealed body to its row: moved to another row or table, it does not open.
    private static func associatedData(id: String, table: OutboxTable) -> [UInt8] { Array("\(table.name).body\u{0}\(id)".utf8) }
}
