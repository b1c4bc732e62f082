/// Which events a page of the audit trail lists.
public struct AuditFilter: Sendable, Equatable {
    public var userID: String?
    /// A type prefix (`sign_in.`), matched against the known types.
    public var typePrefix: String?
    /// From this time on (Unix seconds, inclusive).
    public var since: Int64?
    /// Before this time (exclusive).
    public var until: Int64?

    public init(userID: String? = nil, typePrefix: String? = nil, since: Int64? = nil, until: Int64? = nil) {
        self.userID = userID
        self.typePrefix = typePrefix
        self.since = since
        self.until = until
    }
}
