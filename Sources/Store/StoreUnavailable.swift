/// The database cannot take the request now: PostgreSQL down, restarting, or every pooled
/// connection busy; SQLite locked by another process past its busy timeout. Each engine turns
/// its driver's errors of that kind into this one, so that the layers above recognise an
/// outage whichever engine, and whichever call, met it. Nothing was changed; the application
/// answers 503 `database_unavailable`.
public struct StoreUnavailable: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }

    public init(reason: String) {
        self.reason = reason
    }
}
