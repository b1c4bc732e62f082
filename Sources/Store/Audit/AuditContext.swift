/// Who is acting, and from where, for the audit events a Store operation writes: passed into
/// the operation so its events are inserted in the change's own transaction.
public struct AuditContext: Sendable, Equatable {
    /// The longest user agent kept, in bytes of UTF-8.
    public static let userAgentLimit = 256

    public var actor: AuditActor
    /// The client address, after `trusted_proxies`.
    public var ip: String?
    /// At most `userAgentLimit` bytes of UTF-8, cut on a character boundary.
    public private(set) var userAgent: String?
    /// The session that acted, when there is one.
    public var sessionID: String?

    public init(actor: AuditActor, ip: String? = nil, userAgent: String? = nil, sessionID: String? = nil) {
        self.actor = actor
        self.ip = ip
        self.userAgent = userAgent.flatMap(Self.cut)
        self.sessionID = sessionID
    }

    /// The server on its own (housekeeping, re-validation, the transfer).
    public static let system = AuditContext(actor: .system)
    /// Apple's server-to-server notifications.
    public static let apple = AuditContext(actor: .apple)
    /// An operator at the command line.
    public static let admin = AuditContext(actor: .admin)

    /// The same context acting for `actor`.
    public func acting(as actor: AuditActor) -> AuditContext {
        var copy = self
        copy.actor = actor
        return copy
    }

    /// `text` cut to `userAgentLimit` bytes on a character boundary, without NULs (which
    /// PostgreSQL's text refuses); nil when nothing is left.
    static func cut(_ text: String) -> String? {
        var kept = ""
        var bytes = 0
        for character in text where character != "\u{0}" {
            let size = character.utf8.count
            guard bytes + size <= userAgentLimit else { break }
            kept.append(character)
            bytes += size
        }
        return kept.isEmpty ? nil : kept
    }
}
