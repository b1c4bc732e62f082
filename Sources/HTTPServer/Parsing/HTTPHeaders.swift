/// Header fields in arrival order. Names compare case-insensitively (RFC 9110 §5.1); values are
/// kept as received, with surrounding whitespace removed.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Field = (name: String, value: String)

    private(set) var fields: [Field] = []

    public init() {}

    /// Room for `capacity` fields without growing: for responses built on a hot path.
    public init(capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    public var count: Int { fields.count }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every field of this name with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name, value))
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { Self.equalsIgnoringCase($0.name, name) }
    }

    /// The first value of the field, or nil.
    public subscript(_ name: String) -> String? {
        for field in fields where Self.equalsIgnoringCase(field.name, name) { return field.value }
        return nil
    }

    public func values(_ name: String) -> [String] {
        fields.filter { Self.equalsIgnoringCase($0.name, name) }.map(\.value)
    }

    /// Every line of a list-valued field joined in order with ", " (RFC 9110 §5.3): proxies
    /// such as HAProxy append a new `X-Forwarded-For` line rather than extend the last one.
    /// Every request's access record asks for one, so a single line costs no allocation.
    public func combinedValue(_ name: String) -> String? {
        var combined: String?
        for field in fields where Self.equalsIgnoringCase(field.name, name) {
            if combined == nil { combined = field.value } else { combined! += ", " + field.value }
        }
        return combined
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// ASCII-only case folding: header names are tokens, so this is exact and allocation-free.
    static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                for i in 0..<x.count where lowercased(x[i]) != lowercased(y[i]) { return false }
                return true
            }
        }
    }

    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }
}
