import OpenSSLCrypto
import WireFormat

/// Random identifiers and opaque tokens for the records in this module.
enum RecordID {
    /// `prefix` + 128 random bits as lower-case hex (`usr_…`, `ses_…`): unguessable, so an id
    /// leaked in a log or URL reveals nothing about other records.
    static func make(prefix: String) -> String {
        prefix + Hex.encode(SecureRandom.bytes(16))
    }

    /// `prefix` + `now` (seconds, 8 hex digits) + 128 random bits: as unguessable as `make`, but
    /// ids made later sort later, so the index on them grows at its end (the pages a commit
    /// already writes) instead of taking one random page per row. For rows made on every
    /// sign-in (sessions, and users: each new user's sign-in makes one).
    static func make(prefix: String, orderedBy now: Int64) -> String {
        let seconds = UInt32(clamping: now)
        let time = [UInt8(seconds >> 24), UInt8(truncatingIfNeeded: seconds >> 16), UInt8(truncatingIfNeeded: seconds >> 8), UInt8(truncatingIfNeeded: seconds)]
        return prefix + Hex.encode(time + SecureRandom.bytes(16))
    }
}
