// libFuzzer target for the JSON parser and writer (Sources/JSON): every request body of the API,
// the `user` field of Apple's form post, and the header and claims of every JWS.
//
// Properties (a violation traps with fatalError, which libFuzzer records as a crash):
//   1. Whatever it accepts is valid UTF-8, nests no deeper than the limit, and has no object
//      with a repeated key.
//   2. What it accepts, written back, parses to an equal value; writing that again gives the
//      same bytes (the writer is canonical for its own output).
//   3. The first byte decides nothing alone: the same document with a leading space parses
//      to the same value (whitespace is insignificant), and with a trailing `x` it is refused
//      (no trailing bytes).

private func depth(_ value: JSONValue) -> Int {
    switch value {
    case .array(let items): 1 + (items.map(depth).max() ?? 0)
    case .object(let object): 1 + (object.members.map { depth($0.value) }.max() ?? 0)
    default: 0
    }
}

private func hasRepeatedKey(_ value: JSONValue) -> Bool {
    switch value {
    case .array(let items): return items.contains(where: hasRepeatedKey)
    case .object(let object):
        var seen: [[UInt8]] = []
        for member in object.members {
            let key = Array(member.key.utf8)
            if seen.contains(key) { return true }
            seen.append(key)
        }
        return object.members.contains { hasRepeatedKey($0.value) }
    default: return false
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let value = try? JSONParser.parse(bytes) else { return 0 }

    if String(validating: bytes, as: UTF8.self) == nil { fatalError("property violated: accepted bytes that are not UTF-8") }
    let parser = JSONParser()
    if depth(value) > parser.maxDepth + 1 { fatalError("property violated: nesting \(depth(value)) accepted") }
    if hasRepeatedKey(value) { fatalError("property violated: an object with a repeated key was accepted") }

    let written = JSONWriter.bytes(value)
    guard let again = try? JSONParser.parse(written) else {
        fatalError("property violated: the writer's output does not parse: \(String(decoding: written, as: UTF8.self))")
    }
    if again != value { fatalError("property violated: \(value) written and read back is \(again)") }
    if JSONWriter.bytes(again) != written { fatalError("property violated: writing is not stable") }

    if (try? JSONParser.parse([UInt8(ascii: " ")] + bytes)) != value { fatalError("property violated: a leading space changed the value") }
    if (try? JSONParser.parse(bytes + [UInt8(ascii: "x")])) != nil { fatalError("property violated: trailing bytes accepted") }
    return 0
}
