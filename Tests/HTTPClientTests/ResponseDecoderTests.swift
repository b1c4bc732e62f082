@testable import HTTPClient
import Testing

/// The decoder alone: the same bytes give the same response however they are split.
@Suite struct ResponseDecoderTests {
    private func decode(_ wire: String, pieceSize: Int, limit: Int = 1 << 20, isHead: Bool = false) throws -> ResponseDecoder {
        var decoder = ResponseDecoder(maxBodyBytes: limit, isHeadRequest: isHead)
        let bytes = Array(wire.utf8)
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + pieceSize)
            try bytes[offset..<end].withUnsafeBytes { buffer in try decoder.feed(buffer) }
            offset = end
        }
        return decoder
    }

    @Test(arguments: [1, 2, 3, 7, 1000])
    func chunkedBodiesDecodeWhateverTheSplit(pieceSize: Int) throws {
        let wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5;x=y\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nTrailer: t\r\n\r\n"
        let decoder = try decode(wire, pieceSize: pieceSize)
        #expect(decoder.isComplete)
        #expect(String(decoding: decoder.body, as: UTF8.self) == "hello world")
        #expect(decoder.framing == .chunked)
        #expect(decoder.allowsReuse)
    }

    @Test(arguments: [1, 4, 1000])
    func bareLineFeedsAndInterimResponsesAreAccepted(pieceSize: Int) throws {
        let decoder = try decode("HTTP/1.1 103 Early Hints\nLink: x\n\nHTTP/1.1 201 Created\nContent-Length: 3\n\nabc", pieceSize: pieceSize)
        #expect(decoder.head?.status == 201)
        #expect(decoder.head?.headers.first?.0 == "Content-Length")
        #expect(String(decoding: decoder.body, as: UTF8.self) == "abc")
    }

    @Test func reuseFollowsVersionConnectionAndFraming() throws {
        #expect(try decode("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", pieceSize: 100).allowsReuse)
        #expect(try !decode("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n", pieceSize: 100).allowsReuse)
        #expect(try !decode("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", pieceSize: 100).allowsReuse)
        // Bytes after the response mean the stream is out of step.
        #expect(try !decode("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab", pieceSize: 100).allowsReuse)
        var untilClose = try decode("HTTP/1.1 200 OK\r\n\r\nabc", pieceSize: 100)
        #expect(!untilClose.isComplete)
        try untilClose.finish()
        #expect(untilClose.isComplete && !untilClose.allowsReuse)
    }

    /// The size line is read as the server reads it (WireFormat's `ChunkSize`).
    @Test(arguments: ["zz", "5 x", "5;ext\u{1}", ""])
    func malformedChunkSizeLinesAreRefused(_ line: String) {
        #expect(throws: HTTPClientError.self) {
            try decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(line)\r\nhello\r\n0\r\n\r\n", pieceSize: 100)
        }
    }

    @Test func aHeadResponseHasNoBody() throws {
        let decoder = try decode("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", pieceSize: 100, isHead: true)
        #expect(decoder.isComplete && decoder.body.isEmpty)
    }

    @Test func limitsApplyBeforeTheBodyArrives() throws {
        #expect(throws: HTTPClientError.responseTooLarge) { try decode("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", pieceSize: 100, limit: 10) }
        #expect(throws: HTTPClientError.responseTooLarge) {
            try decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", pieceSize: 100)
        }
        #expect(throws: HTTPClientError.responseTooLarge) {
            try decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n", pieceSize: 100, limit: 10)
        }
        // The bound is on the size, not the digits: leading zeros are only zeros.
        let padded = try decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000000003\r\nabc\r\n0\r\n\r\n", pieceSize: 100)
        #expect(String(decoding: padded.body, as: UTF8.self) == "abc")
        let endless = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", count: 2000)
        #expect(throws: HTTPClientError.self) { try decode(endless, pieceSize: 4096) }
    }
}
