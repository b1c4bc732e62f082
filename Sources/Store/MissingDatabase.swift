/// A command named a SQLite database that does not exist (a mistyped path would otherwise
/// create an empty one).
public struct MissingDatabase: Error, Sendable, CustomStringConvertible {
    public let path: String
    public var description: String { "no database at \(path) (start the server once, or run siwa-server migrate)" }
}
