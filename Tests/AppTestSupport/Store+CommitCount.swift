@testable import SQLite
@testable import Store

extension Store {
    /// How many transactions SQLite's one writer has committed (nil on PostgreSQL, which has no
    /// single writer): a test counts the commits a request makes.
    public var sqliteCommitCount: Int? { database?.writerCommitCount }
}
