/// A strict RFC 8259 parser for untrusted input: bounded depth and size, no duplicate keys
/// (two `sub` members in a token would let two readers disagree), no trailing bytes, valid
/// UTF-8 and escapes only, and no U+0000 in a string: RFC 8259 allows `\u0000`, but no text
/// this server keeps may hold it (PostgreSQL's text cannot), so every body is refused here, at
/// the one place JSON is read, before any route acts on it.
public struct JSONParser {
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public let reason: String
        public let offset: Int
        public var description: String { "\(reason) at byte \(offset)" }

        /// The reason given for a string that holds U+0000, escaped or as a raw byte.
        public static let nulInString = "U+0000 in a string"
        public var isNULInString: Bool { reason == Self.nulInString }
    }

    public var maxDepth = 32
    public var maxBytes = 1 << 20

    public init() {}

    public static func parse(_ bytes: some Collection<UInt8>) throws(Failure) -> JSONValue {
        try JSONParser().parse(bytes)
    }

    /// The common case, without going through a generic entry point.
    public static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(Failure) -> JSONValue in try JSONParser().parse(buffer: buffer) }
    }

    public func parse(buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONValue {
        guard buffer.count <= maxBytes else { throw Failure(reason: "document over \(maxBytes) bytes", offset: 0) }
        var reader = Reader(bytes: buffer, maxDepth: maxDepth)
        return try reader.document()
    }

    public static func parse(_ text: String) throws(Failure) -> JSONValue {
        try JSONParser().parse(Array(text.utf8))
    }

    public func parse(_ bytes: some Collection<UInt8>) throws(Failure) -> JSONValue {
        guard bytes.count <= maxBytes else { throw Failure(reason: "document over \(maxBytes) bytes", offset: 0) }
        let result: Result<JSONValue, Failure>? = bytes.withContiguousStorageIfAvailable { buffer in
            var reader = Reader(bytes: buffer, maxDepth: maxDepth)
            return Result { () throws(Failure) -> JSONValue in try reader.document() }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer throws(Failure) -> JSONValue in
            var reader = Reader(bytes: buffer, maxDepth: maxDepth)
            return try reader.document()
        }
    }
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0
    var depth = 0
    /// Whether the last string read had neither escapes nor bytes past ASCII: then its bytes
    /// in the document are its text.
    var lastStringWasPlainASCII = false

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func fail(_ reason: String) -> JSONParser.Failure { JSONParser.Failure(reason: reason, offset: position) }

    mutating func document() throws(JSONParser.Failure) -> JSONValue {
        skipWhitespace()
        let value = try value()
        skipWhitespace()
        guard position == bytes.count else { throw fail("trailing characters") }
        return value
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func value() throws(JSONParser.Failure) -> JSONValue {
        guard position < bytes.count else { throw fail("unexpected end") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object(try object())
        case UInt8(ascii: "["): return .array(try array())
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected character")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONParser.Failure) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw fail("unexpected end") }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] {
            throw fail("invalid literal")
        }
        position += count
    }

    mutating func enter() throws(JSONParser.Failure) {
        depth += 1
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth)") }
    }

    mutating func object() throws(JSONParser.Failure) -> JSONObject {
        try enter()
        defer { depth -= 1 }
        position += 1
        var members: [JSONObject.Member] = []
        members.reserveCapacity(16)
        // Small objects (every object Apple or a client sends) are checked for duplicates by a
        // scan; past `scanLimit` members the keys go into a set, so a hostile body of many short
        // keys costs linear time, not quadratic.
        let scanLimit = 16
        var seen: Set<String> = []
        // The scan compares strings only where fingerprints allow (see `fingerprint`): every
        // token's claims are a dozen keys, and String comparison is a call each.
        var fingerprints = InlineArray<16, UInt64>(repeating: 0)
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return JSONObject(storage: members)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let keyStart = position + 1
            let key = try string()
            let isDuplicate: Bool
            if members.count < scanLimit {
                let fingerprint = lastStringWasPlainASCII ? Self.fingerprint(UnsafeBufferPointer(rebasing: bytes[keyStart..<(position - 1)])) : 0
                var found = false
                for index in members.indices {
                    let other = fingerprints[index]
                    if fingerprint == 0 || other == 0 || other == fingerprint, members[index].key == key {
                        found = true
                        break
                    }
                }
                isDuplicate = found
                fingerprints[members.count] = fingerprint
            } else {
                if seen.isEmpty { seen = Set(members.map(\.key)) }
                isDuplicate = !seen.insert(key).inserted
            }
            if isDuplicate { throw fail("duplicate member \"\(key.prefix(40))\"") }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            position += 1
            skipWhitespace()
            members.append(JSONObject.Member(key: key, value: try value()))
            skipWhitespace()
            guard position < bytes.count else { throw fail("unexpected end") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            guard bytes[position] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
            position += 1
            return JSONObject(storage: members)
        }
    }

    /// A key's length and first seven bytes, with the top bit set; 0 for a key that was not
    /// plain ASCII (escaped or beyond ASCII), which is always compared as a string. Two plain
    /// ASCII keys are equal exactly when their bytes are, so different fingerprints mean
    /// different keys; Unicode equivalence, which String comparison follows, only matters
    /// where a key is not plain ASCII.
    static func fingerprint(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var value = UInt64(1) << 63 | UInt64(min(key.count, 127)) << 56
        for index in 0..<min(key.count, 7) { value |= UInt64(key[index]) << (8 * index) }
        return value
    }

    mutating func array() throws(JSONParser.Failure) -> [JSONValue] {
        try enter()
        defer { depth -= 1 }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return elements
        }
        while true {
            skipWhitespace()
            elements.append(try value())
            skipWhitespace()
            guard position < bytes.count else { throw fail("unexpected end") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            guard bytes[position] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
            position += 1
            return elements
        }
    }

    mutating func string() throws(JSONParser.Failure) -> String {
        position += 1
        let start = position
        var isASCII = true
        // Fast path: no escapes, all plain bytes.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                lastStringWasPlainASCII = isASCII
                // ASCII needs no validation and cannot be "repaired": take the fast path.
                if isASCII { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else { throw fail("invalid UTF-8") }
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            if byte >= 0x80 { isASCII = false }
            position += 1
        }
        lastStringWasPlainASCII = false
        var output = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: output, as: UTF8.self) else { throw fail("invalid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw fail("unexpected end") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): output.append(0x22)
                case UInt8(ascii: "\\"): output.append(0x5C)
                case UInt8(ascii: "/"): output.append(0x2F)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                            throw fail("unpaired surrogate")
                        }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("unpaired surrogate")
                    }
                    guard scalar != 0 else { throw fail(JSONParser.Failure.nulInString) }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid escape") }
                    output.append(contentsOf: String(Character(unicode)).utf8)
                default:
                    throw fail("invalid escape")
                }
            case 0:
                throw fail(JSONParser.Failure.nulInString)
            case 1..<0x20:
                throw fail("control character in string")
            default:
                output.append(byte)
                position += 1
            }
        }
        throw fail("unterminated string")
    }

    mutating func hex4() throws(JSONParser.Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw fail("unexpected end") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw fail("invalid escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    mutating func number() throws(JSONParser.Failure) -> JSONValue {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw fail("invalid number") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if (0x31...0x39).contains(bytes[position]) {
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
        } else {
            throw fail("invalid number")
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            let digits = position
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
            guard position > digits else { throw fail("invalid number") }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            let digits = position
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
            guard position > digits else { throw fail("invalid number") }
        }
        if isInteger, let integer = integer(from: start) { return .integer(integer) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw fail("number out of range") }
        return .double(double)
    }

    /// The integer written from `start` to `position` (already checked: an optional `-`, then
    /// digits), or nil when it does not fit, as `Int64(text)` would say, without making the text.
    func integer(from start: Int) -> Int64? {
        var index = start
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var value: Int64 = 0
        while index < position {
            let digit = Int64(bytes[index] &- 0x30)
            let (scaled, scaleOverflow) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow) = negative ? scaled.subtractingReportingOverflow(digit) : scaled.addingReportingOverflow(digit)
            if scaleOverflow || overflow { return nil }
            value = next
            index += 1
        }
        return value
    }
}
