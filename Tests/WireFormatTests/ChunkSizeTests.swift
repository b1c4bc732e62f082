import Testing
import WireFormat

@Suite struct ChunkSizeTests {
    static func parse(_ line: String) throws(ChunkSize.Failure) -> Int {
        try ChunkSize.parse(Array(line.utf8)[...])
    }

    @Test(arguments: [
        ("0", 0), ("5", 5), ("a", 10), ("A", 10), ("1f", 31), ("1F", 31), ("ffff", 65_535),
        // Leading zeros are digits like any other (the bound is on the value).
        ("00000000000000000000000001", 1),
        // Extensions, and the whitespace allowed before them, are ignored.
        ("5;name=value;flag", 5), ("5 ;x", 5), ("5\t; x=\"a\tb\"", 5), ("5;", 5), ("5 \t", 5),
        // The largest accepted: 15 digits, 2^60 - 1.
        ("fffffffffffffff", (1 << 60) - 1), ("0fffffffffffffff", (1 << 60) - 1),
    ])
    func sizes(_ line: String, _ size: Int) throws {
        #expect(try Self.parse(line) == size)
    }

    @Test(arguments: ["", ";x", " 5", "g", "5x", "5 x", "-1", "+5", "0x5", "5,6", "5\r", "５"])
    func malformed(_ line: String) {
        #expect(throws: ChunkSize.Failure.malformed) { try Self.parse(line) }
    }

    @Test(arguments: ["1000000000000000", "ffffffffffffffff", "FFFFFFFFFFFFFFFFFFFF", "100000000000000000000000000000000"])
    func tooLarge(_ line: String) {
        #expect(throws: ChunkSize.Failure.tooLarge) { try Self.parse(line) }
    }

    @Test(arguments: ["5;a\u{0}", "5;a\u{1F}b", "5; \u{7F}", "5;\r", "5;x\n"])
    func controlCharactersInExtensions(_ line: String) {
        #expect(throws: ChunkSize.Failure.controlCharacterInExtension) { try Self.parse(line) }
    }

    /// The line is a slice of the connection's buffer: indices do not start at zero.
    @Test func readsASliceInPlace() throws {
        let buffer = Array("xx1a;e\r\nzz".utf8)
        #expect(try ChunkSize.parse(buffer[2..<6]) == 26)
        #expect(throws: ChunkSize.Failure.malformed) { try ChunkSize.parse(buffer[0..<6]) }
        #expect(throws: ChunkSize.Failure.malformed) { try ChunkSize.parse(buffer[2..<2]) }
    }
}
