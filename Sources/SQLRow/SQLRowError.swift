/// A row read as something it does not hold: a missing column, or a value of another type.
/// Names the column and the types, never the value (it may be a secret).
public struct SQLRowError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        case noSuchColumn
        case mismatch
    }

    public let kind: Kind
    public let message: String

    public var isMismatch: Bool { kind == .mismatch }
    public var description: String { message }
}
