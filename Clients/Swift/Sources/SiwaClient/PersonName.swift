/// A person's name as the server keeps it (`{"given", "family"}`); either part may be missing.
public struct PersonName: Sendable, Hashable, Codable {
    public var given: String?
    public var family: String?

    public init(given: String?, family: String?) {
        self.given = given
        self.family = family
    }

    var isEmpty: Bool { (given ?? "").isEmpty && (family ?? "").isEmpty }
}
