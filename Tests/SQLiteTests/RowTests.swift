import SQLite
import Testing

@Suite struct RowTests {
    private func sampleRow(in folder: String) throws -> Row {
        let connection = try Connection(path: folder + "/rows.sqlite3")
        let row = try connection.queryOne(
            "SELECT 7 AS n, 'seven' AS s, x'0102' AS b, 1.5 AS d, NULL AS absent, 3 AS whole"
        )
        return try #require(row)
    }

    @Test func typedAccessorsByIndexAndName() async throws {
        try await withTemporaryFolder { folder in
            let row = try sampleRow(in: folder)
            #expect(row.count == 6)
            #expect(row.columnNames == ["n", "s", "b", "d", "absent", "whole"])
            #expect(try row.int(0) == 7)
            #expect(try row.int("n") == 7)
            #expect(try row.int64("n") == 7)
            #expect(try row.string(1) == "seven")
            #expect(try row.string("s") == "seven")
            #expect(try row.blob("b") == [1, 2])
            #expect(try row.double("d") == 1.5)
            // A REAL column's whole numbers may come back as integers.
            #expect(try row.double("whole") == 3)
            #expect(row["s"] == .text("seven"))
            #expect(row["missing"] == nil)
        }
    }

    @Test func optionalAccessorsMapNullToNil() async throws {
        try await withTemporaryFolder { folder in
            let row = try sampleRow(in: folder)
            #expect(try row.optionalInt("absent") == nil)
            #expect(try row.optionalString("absent") == nil)
            #expect(try row.optionalBlob("absent") == nil)
            #expect(try row.optionalDouble("absent") == nil)
            #expect(try row.optionalInt64("absent") == nil)
            #expect(try row.optionalInt("n") == 7)
            #expect(try row.optionalString(1) == "seven")
        }
    }

    @Test func wrongTypesAndMissingColumnsThrow() async throws {
        try await withTemporaryFolder { folder in
            let row = try sampleRow(in: folder)
            let mismatch = #expect(throws: SQLRowError.self) { try row.string("n") }
            #expect(mismatch?.isMismatch == true)
            #expect(mismatch?.message.contains("expected text") == true)
            #expect(throws: SQLRowError.self) { try row.int("absent") }
            #expect(throws: SQLRowError.self) { try row.optionalInt("s") }
            #expect(throws: SQLRowError.self) { try row.int("missing") }
            #expect(throws: SQLRowError.self) { try row.int(99) }
        }
    }
}
