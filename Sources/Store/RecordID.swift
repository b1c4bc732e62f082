import OpenSSLCrypto
import WireFormat

/// Random identifiers and opaque tokens for the records in this module.
enum RecordID {
    /// `prefix` + 128 random bits as lower-case hex (`usr_…`, `ses_…`): unguessable, so an id
    /// leaked in a log or URL reveals nothing about other records.
    static func make(prefix: String) -> String {
        prefix + Hex.encode(SecureRandom.bytes(16))
    }
}
