/// One step of a schema: applied once, in version order, and recorded in `schema_migrations`.
/// A shipped migration never changes; a new version is added instead.
public struct Migration: Sendable, Equatable {
    public let version: Int
    public let name: String
    /// One or more statements. They run inside the migration's transaction, so they must not
    /// BEGIN or COMMIT themselves.
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}
