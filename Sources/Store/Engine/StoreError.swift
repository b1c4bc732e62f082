/// What the database refused, whichever engine ran the call. Each engine translates its
/// driver's errors into this one (as GRDB's `DatabaseError` does), so the layers above tell a
/// taken key, an outage and a broken invariant apart without knowing the engine. Bound values
/// are never included: they may hold secrets.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A unique (or primary) key refused the row: the transaction changed nothing. `constraint`
    /// is the engine's name for it: PostgreSQL's constraint, SQLite's `table.column` list.
    case uniqueViolation(constraint: String)
    /// The database cannot take the request now: PostgreSQL down, restarting, or every pooled
    /// connection busy; SQLite locked by another process past its busy timeout. Nothing was
    /// changed; the application answers 503 `database_unavailable`.
    case unavailable(reason: String)
    /// Anything else: a statement the database refused, a row that breaks the schema's rules,
    /// a row gone inside its own transaction. A bug or a database edited behind the server's back.
    case invariant(String)

    public var isUnavailable: Bool {
        if case .unavailable = self { true } else { false }
    }

    public var description: String {
        switch self {
        case .uniqueViolation(let constraint): "unique constraint \(constraint) refused the row"
        case .unavailable(let reason): reason
        case .invariant(let message): message
        }
    }
}
