import Foundation
import Testing
import WireFormat

@Suite struct Base64Tests {
    static func sample(_ length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 0xF8) }
    }

    /// Foundation's encoder is the independent reference.
    static func foundation(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    @Test func urlRoundTripsEveryLengthAndMatchesFoundation() {
        for length in 0..<70 {
            let bytes = Self.sample(length)
            let text = Base64.url.encode(bytes)
            let expected = Self.foundation(bytes).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(text == expected)
            #expect(Base64.url.decode(text) == bytes)
            #expect(Base64.url.decode(Array(text.utf8)[...]) == bytes)
        }
    }

    @Test func standardRoundTripsEveryLengthAndMatchesFoundation() {
        for length in 0..<70 {
            let bytes = Self.sample(length)
            let text = Base64.standard.encode(bytes)
            #expect(text == Self.foundation(bytes))
            #expect(Base64.standard.decode(text) == bytes)
        }
    }

    @Test func encodesTextAsItsUTF8() {
        #expect(Base64.url.encode(#"{"alg":"ES256"}"#) == "eyJhbGciOiJFUzI1NiJ9")
        #expect(Base64.standard.encode("é") == "w6k=")
    }

    @Test func emptyIsEmptyBothWays() {
        #expect(Base64.url.encode([UInt8]()) == "")
        #expect(Base64.standard.encode([UInt8]()) == "")
        #expect(Base64.url.decode("") == [])
        #expect(Base64.standard.decode("") == [])
    }

    /// RFC 4648 §10's vectors.
    @Test(arguments: [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")])
    func rfc4648Vectors(_ plain: String, _ encoded: String) {
        #expect(Base64.standard.encode(plain) == encoded)
        #expect(Base64.standard.decode(encoded) == Array(plain.utf8))
        #expect(Base64.url.decode(encoded.replacingOccurrences(of: "=", with: "")) == Array(plain.utf8))
    }

    /// Wrong alphabet, padding, whitespace, a length no encoder writes, or stray low bits
    /// (`AQ`: `AR` would decode to the same byte).
    @Test(arguments: ["A", "AB=", "AA==", "A+B/", "AB C", "AB\n", " AA", "AQ==", "AR", "AAAAA", "A\u{0}", "é"])
    func urlRefusesAnythingButTheOneSpelling(_ text: String) {
        #expect(Base64.url.decode(text) == nil)
    }

    @Test(arguments: ["AA", "AAA", "AA=", "AAA==", "A===", "====", "AB==", "AAB=", "-_==", "AA==AA==", "A=AA", "AA== "])
    func standardRefusesMissingOrMisplacedPaddingAndStrayBits(_ text: String) {
        #expect(Base64.standard.decode(text) == nil)
    }

    @Test func strayBitsAreRefusedButZeroBitsAccepted() {
        #expect(Base64.url.decode("AA") == [0])
        #expect(Base64.url.decode("AB") == nil)
        #expect(Base64.url.decode("AAA") == [0, 0])
        #expect(Base64.url.decode("AAB") == nil)
        #expect(Base64.standard.decode("AAA=") == [0, 0])
        #expect(Base64.standard.decode("AAF=") == nil)
    }

    /// The data key's reader: either alphabet (even mixed), padding optional but never partial.
    @Test func eitherAlphabetWithOptionalPadding() {
        let lenient = Base64(alphabet: .standardOrURL, padding: .optional)
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF, 0xF8]
        #expect(Base64.standard.encode(bytes) == "+/+/+A==")
        for text in ["+/+/+A==", "+/+/+A", "-_-_-A==", "-_-_-A", "+_-/+A"] {
            #expect(lenient.decode(text) == bytes, "\(text)")
        }
        for text in ["+/+/+A=", "+/+/+A===", "+/+/+A==+A", "+/+/+B", "+/+/ +A", "="] {
            #expect(lenient.decode(text) == nil, "\(text)")
        }
        #expect(lenient.encode(bytes) == "+/+/+A==")
    }

    /// Every kind of collection, and every alphabet and padding, encodes to the same text as an
    /// array does (Foundation is the reference for the array above).
    @Test func encodesEveryCollectionAndPaddingAlike() {
        for length in 0..<10 {
            let bytes = Self.sample(length)
            let padded = Base64.standard.encode(bytes)
            #expect(Base64.standard.encode(bytes[...]) == padded)
            #expect(bytes.withUnsafeBufferPointer { Base64.standard.encode($0) } == padded)
            #expect(Base64.standard.encode(bytes.lazy.map { $0 }) == padded)
            #expect(Base64(alphabet: .standard, padding: .optional).encode(bytes) == padded)
            #expect(Base64(alphabet: .standardOrURL, padding: .required).encode(bytes) == padded)
            let unpadded = padded.replacingOccurrences(of: "=", with: "")
            #expect(Base64(alphabet: .standard, padding: .none).encode(bytes) == unpadded)
            #expect(Base64(alphabet: .url, padding: .required).encode(bytes) == padded.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"))
        }
        #expect(Base64.url.encode("é€") == "w6nigqw")
    }

    @Test func decodesCollectionsWithoutContiguousStorage() {
        let text = Array("Zm9vYmE".utf8)
        #expect(Base64.url.decode(text.lazy.map { $0 }) == Array("fooba".utf8))
        #expect(Base64.url.decode(text.lazy.map { $0 == UInt8(ascii: "E") ? UInt8(ascii: "F") : $0 }) == nil)
    }

    /// The session token's path decodes onto the stack: same answers as the array form.
    @Test func decodesIntoTheCallersBuffer() {
        for text in ["", "Zg", "Zm8", "Zm9v", "Zm9vYmE", "-_-_-A", "AB", "A", "Zm9v!"] {
            var input = text
            let expected = Base64.url.decode(text)
            input.withUTF8 { utf8 in
                let count = Base64.url.decodedCount(utf8)
                #expect(count == (text.utf8.count % 4 == 1 ? nil : text.utf8.count / 4 * 3 + max(0, text.utf8.count % 4 - 1)), "\(text)")
                var buffer = [UInt8](repeating: 0xEE, count: 8)
                let written = buffer.withUnsafeMutableBufferPointer { Base64.url.decode(utf8, into: $0) }
                #expect(written.map { Array(buffer[..<$0]) } == expected, "\(text)")
            }
        }
        // Too small a buffer is refused, not overrun.
        var text = "Zm9vYmFy"
        text.withUTF8 { utf8 in
            var small = [UInt8](repeating: 0, count: 5)
            #expect(small.withUnsafeMutableBufferPointer { Base64.url.decode(utf8, into: $0) } == nil)
        }
    }
}
