import Testing
import WireFormat

@Suite struct HexTests {
    @Test func encodesTwoDigitsPerByte() {
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode([0x00, 0x0F, 0xA5, 0xFF]) == "000fa5ff")
        #expect(Hex.encode([0x00, 0x0F, 0xA5, 0xFF], uppercase: true) == "000FA5FF")
        #expect(Hex.encode([UInt8](0...255)) == (0...255).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
    }

    @Test func encodesAnySequence() {
        let bytes: [UInt8] = [1, 2, 3, 4]
        #expect(Hex.encode(bytes[1..<3]) == "0203")
        #expect(Hex.encode(bytes.lazy.map { $0 * 16 }) == "10203040")
    }

    @Test func appendsToABuffer() {
        var buffer = Array("%".utf8)
        Hex.append(0x2F, to: &buffer, uppercase: true)
        Hex.append(0xAB, to: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == "%2Fab")
    }

    /// Every byte: only the 22 digits of either case have a value.
    @Test func valueOfEveryByte() {
        for byte in UInt8.min...UInt8.max {
            let expected = UInt8(String(UnicodeScalar(byte)), radix: 16)
            #expect(Hex.value(byte) == expected, "\(byte)")
        }
        #expect(Hex.value(UInt8(ascii: "g")) == nil)
        #expect(Hex.value(UInt8(ascii: "F")) == 15)
        #expect(Hex.value(UInt8(ascii: "a")) == 10)
    }
}
