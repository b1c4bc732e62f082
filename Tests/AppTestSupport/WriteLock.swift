import SQLite

/// Another connection holds SQLite's write lock until `release()` (an operator's shell, a
/// backup tool): the server's writes wait its busy timeout and give up; its reads go on.
public final class WriteLock {
    private let connection: SQLite.Connection

    public init(path: String) throws {
        connection = try SQLite.Connection(path: path)
        try connection.execute("BEGIN IMMEDIATE")
    }

    public func release() throws { try connection.execute("ROLLBACK") }
}
