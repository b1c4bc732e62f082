@testable import PostgreSQL
import Testing

struct PostgresValueTests {
    private func decode(_ text: String, _ type: UInt32) -> PostgresValue {
        Array(text.utf8).withUnsafeBufferPointer { PostgresValue(text: $0, type: type) }
    }

    @Test func integersParseToTheEdgesAndNoFurther() {
        #expect(decode("9223372036854775807", PostgresType.int8) == .integer(.max))
        #expect(decode("-9223372036854775808", PostgresType.int8) == .integer(.min))
        #expect(decode("0", PostgresType.int4) == .integer(0))
        #expect(decode("-", PostgresType.int4) == .text("-"))
        #expect(decode("9223372036854775808", PostgresType.numeric) == .real(9_223_372_036_854_775_808))
        #expect(decode("12.50", PostgresType.numeric) == .real(12.5))
        #expect(decode("12", PostgresType.numeric) == .integer(12))
    }

    @Test func floatsIncludingInfinitiesParse() {
        #expect(decode("Infinity", PostgresType.float8) == .real(.infinity))
        #expect(decode("-Infinity", PostgresType.float8) == .real(-.infinity))
        #expect(decode("1e-308", PostgresType.float8) == .real(1e-308))
        if case .real(let nan) = decode("NaN", PostgresType.float8) { #expect(nan.isNaN) } else { Issue.record("NaN") }
    }

    @Test func byteaDecodesHexAndEscapeForms() {
        #expect(decode("\\x", PostgresType.bytea) == .blob([]))
        #expect(decode("\\x00ff7F", PostgresType.bytea) == .blob([0, 255, 127]))
        // bytea_output = escape, which a server may be configured with.
        #expect(decode("a\\000\\377", PostgresType.bytea) == .blob([97, 0, 255]))
        #expect(decode("t", PostgresType.bool) == .boolean(true))
        #expect(decode("f", PostgresType.bool) == .boolean(false))
        #expect(decode("2026-01-01", 1082) == .text("2026-01-01"))
    }

    @Test func parametersAreTypedAndLaidOutForLibpq() throws {
        let parameters = try PostgresParameters([.integer(1), .real(2), .text("x"), .blob([]), .boolean(true), .null], sql: "")
        #expect(parameters.types == [PostgresType.int8, PostgresType.float8, 0, PostgresType.bytea, PostgresType.bool, 0])
        parameters.withArrays { values, lengths, formats in
            guard let values, let lengths, let formats else { Issue.record("no arrays"); return }
            #expect((0..<6).map { lengths[$0] } == [8, 8, 1, 0, 1, 0])
            #expect((0..<6).map { formats[$0] } == [1, 1, 0, 1, 1, 0])
            // An empty blob is a zero-length value with an address; only NULL has none.
            #expect(values[3] != nil)
            #expect(values[5] == nil)
            #expect(String(cString: values[2]!) == "x")
        }
    }
}
