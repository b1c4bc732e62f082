import SQLite
import Testing

@Suite struct SQLiteValueTests {
    /// A value with a short name, so large blobs do not flood the test log.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let value: SQLiteValue
        var testDescription: String { name }
        init(_ name: String, _ value: SQLiteValue) {
            self.name = name
            self.value = value
        }
    }

    static let values: [Case] = [
        Case("null", .null),
        Case("zero", .integer(0)), Case("one", .integer(1)), Case("minus one", .integer(-1)),
        Case("Int64.min", .integer(.min)), Case("Int64.max", .integer(.max)),
        Case("3.25", .real(3.25)), Case("-1e300", .real(-1e300)), Case("infinity", .real(.infinity)),
        Case("-0.5", .real(-0.5)),
        Case("empty text", .text("")), Case("plain text", .text("plain")),
        Case("unicode text", .text("héllo wörld 🌍 日本語")), Case("text with NUL", .text("a\u{0}b\u{0}")),
        Case("empty blob", .blob([])), Case("small blob", .blob([0, 1, 2, 255])),
        Case("100 kB blob", .blob(Array(repeating: 0xAB, count: 100_000))),
    ]

    @Test(arguments: values)
    func roundTripsThroughAColumn(_ testCase: Case) async throws {
        let value = testCase.value
        try await withTemporaryFolder { folder in
            let connection = try Connection(path: folder + "/values.sqlite3")
            // No declared type: the column stores every value exactly as bound.
            try connection.execute("CREATE TABLE t(v)")
            try connection.run("INSERT INTO t(v) VALUES (?)", [value])
            let row = try #require(try connection.queryOne("SELECT v, typeof(v) FROM t"))
            #expect(row[0] == value)
            let expectedType = switch value {
            case .null: "null"
            case .integer: "integer"
            case .real: "real"
            case .text: "text"
            case .blob: "blob"
            case .boolean: "integer"
            }
            #expect(try row.string(1) == expectedType)
        }
    }

    @Test(arguments: values)
    func roundTripsThroughAParameter(_ testCase: Case) async throws {
        let value = testCase.value
        try await withTemporaryFolder { folder in
            let connection = try Connection(path: folder + "/values.sqlite3")
            #expect(try connection.queryOne("SELECT ?", [value])?[0] == value)
        }
    }

    @Test func literalsBuildTheExpectedCases() {
        // `SQLiteValue(true)` would be the literal again; a flag in a variable is an integer.
        let (yes, no) = (true, false)
        let values: [SQLiteValue] = [nil, 42, 2.5, "text", true, false, SQLiteValue(yes), SQLiteValue(no)]
        #expect(values == [.null, .integer(42), .real(2.5), .text("text"), .boolean(true), .boolean(false), .integer(1), .integer(0)])
        #expect(SQLiteValue(7) == .integer(7))
        #expect(SQLiteValue.null.isNull)
        #expect(!SQLiteValue.integer(0).isNull)
    }
}
