// libFuzzer target for the form decoder (Sources/HTTPServer/Messages/FormFields.swift and
// Sources/WireFormat/PercentDecoding.swift): Apple's form_post to the web callback, the account forms, the
// simulator's token and revoke endpoints, and query strings.
//
// Properties (a violation traps with fatalError, which libFuzzer records as a crash):
//   1. It agrees with a byte-level reference decoder: split on the byte `&`, then on the first
//      `=`, `+` is a space, `%XX` escapes, then UTF-8 validation; the same fields byte for byte,
//      the same refusals (a malformed escape, non-UTF-8 or U+0000, a repeated name).
//   2. What it decodes re-encodes and decodes to the same fields.

private enum ReferenceResult: Equatable {
    case fields([[UInt8]])
    case malformed
    case duplicate
}

private func hex(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

private func referenceDecode(_ part: ArraySlice<UInt8>) -> [UInt8]? {
    var output: [UInt8] = []
    var index = part.startIndex
    while index < part.endIndex {
        let byte = part[index]
        if byte == UInt8(ascii: "%") {
            guard index + 2 < part.endIndex, let high = hex(part[index + 1]), let low = hex(part[index + 2])
            else { return nil }
            output.append(high << 4 | low)
            index += 3
        } else {
            output.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
    }
    return output.contains(0) || String(validating: output, as: UTF8.self) == nil ? nil : output
}

/// Names and values flattened: name, value, name, value…
private func reference(_ bytes: [UInt8]) -> ReferenceResult {
    guard String(validating: bytes, as: UTF8.self) != nil else { return .malformed }
    var flat: [[UInt8]] = []
    var names: [[UInt8]] = []
    for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
        let equals = pair.firstIndex(of: UInt8(ascii: "="))
        let rawName = pair[pair.startIndex..<(equals ?? pair.endIndex)]
        let rawValue = equals.map { pair[($0 + 1)...] } ?? []
        guard let name = referenceDecode(rawName), let value = referenceDecode(rawValue) else { return .malformed }
        if names.contains(name) { return .duplicate }
        names.append(name)
        flat += [name, value]
    }
    return .fields(flat)
}

private func flatten(_ fields: FormFields) -> [[UInt8]] {
    fields.fields.flatMap { [Array($0.name.utf8), Array($0.value.utf8)] }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFormFields(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let expected = reference(bytes)
    let actual: ReferenceResult
    var decoded: FormFields?
    do throws(FormFields.Failure) {
        let fields = try FormFields(parsing: bytes)
        decoded = fields
        actual = .fields(flatten(fields))
    } catch {
        switch error {
        case .malformed: actual = .malformed
        case .duplicate: actual = .duplicate
        }
    }
    if actual != expected {
        fatalError("property violated: decoder says \(actual), reference says \(expected) for \(bytes)")
    }
    if let decoded {
        let again = try? FormFields(parsing: Array(decoded.encoded().utf8))
        if again.map(flatten) != flatten(decoded) {
            fatalError("property violated: re-encoding \(flatten(decoded)) gives \(String(describing: again.map(flatten)))")
        }
    }
    return 0
}
