import JSON

/// One recorded event of the audit trail, as the events table holds it.
public struct AuditEvent: Sendable, Equatable {
    /// `evt_` and 128 random bits.
    public let id: String
    /// Unix seconds.
    public let at: Int64
    /// An `AuditEventType` raw value (kept as text, so a row a newer build wrote still reads).
    public let type: String
    public let userID: String?
    public let sessionID: String?
    public let actor: String
    public let ip: String?
    public let userAgent: String?
    /// Never a secret: names, reasons, methods, flags.
    public let detail: JSONObject
    /// Where the event stands in the keyset order (time, then insertion).
    public let cursor: AuditCursor
}
