/// A parsed JSON value. Numbers keep whether they were written as integers, since JWT claims
/// such as `exp` must be integers and `event_time` is milliseconds past 2^53 one day.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .double(let value) where value == value.rounded() && abs(value) < 9.0e15: Int64(value)
        default: nil
        }
    }

    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var object: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    public var array: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var isNull: Bool { self == .null }
}

/// An object with its members in document order. Lookups scan: JSON objects here have tens of
/// members, where a scan beats hashing.
public struct JSONObject: Sendable, Equatable, Sequence {
    /// A member. Stored as a struct, not a `(key:value:)` tuple: an array of tuples is built and
    /// torn down through the runtime's generic tuple metadata and witnesses, which showed in the
    /// profile of every token verified.
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONValue
    }

    private(set) var storage: [Member]

    public init(_ members: [(key: String, value: JSONValue)] = []) {
        storage = members.map { Member(key: $0.key, value: $0.value) }
    }

    init(storage: [Member]) {
        self.storage = storage
    }

    /// The members as pairs, in document order (a copy).
    public var members: [(key: String, value: JSONValue)] { storage.map { ($0.key, $0.value) } }

    public subscript(key: String) -> JSONValue? {
        get {
            for member in storage where member.key == key { return member.value }
            return nil
        }
        set {
            if let index = storage.firstIndex(where: { $0.key == key }) {
                if let newValue { storage[index].value = newValue } else { storage.remove(at: index) }
            } else if let newValue {
                storage.append(Member(key: key, value: newValue))
            }
        }
    }

    public var keys: [String] { storage.map(\.key) }
    public var isEmpty: Bool { storage.isEmpty }

    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[Member]>

        public mutating func next() -> (key: String, value: JSONValue)? {
            base.next().map { ($0.key, $0.value) }
        }
    }

    public func makeIterator() -> Iterator { Iterator(base: storage.makeIterator()) }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.storage == rhs.storage }
}
