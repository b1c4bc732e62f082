import CZlib

/// Inflates a gzip (or zlib) body with a cap on the output, so a small compressed response
/// cannot expand into gigabytes.
enum GzipInflater {
    static func inflate(_ input: [UInt8], limit: Int) throws(HTTPClientError) -> [UInt8] {
        // zlib keeps a pointer back to the stream, so it must not move: heap, not a Swift var.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        guard siwa_inflate_init_auto(stream) == Z_OK else { throw .malformedResponse("zlib initialisation failed") }

        var output: [UInt8] = []
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: 32 * 1024)
        defer { chunk.deallocate() }
        let outcome: Result<Void, HTTPClientError> = input.withUnsafeBufferPointer { source in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.pointee.avail_in = uInt(source.count)
            while true {
                stream.pointee.next_out = chunk
                stream.pointee.avail_out = uInt(32 * 1024)
                let status = CZlib.inflate(stream, Z_NO_FLUSH)
                let produced = 32 * 1024 - Int(stream.pointee.avail_out)
                guard status == Z_OK || status == Z_STREAM_END || (status == Z_BUF_ERROR && produced > 0) else {
                    return .failure(.malformedResponse("bad gzip body"))
                }
                guard produced <= limit - output.count else { return .failure(.responseTooLarge) }
                output.append(contentsOf: UnsafeBufferPointer(start: chunk, count: produced))
                if status == Z_STREAM_END {
                    // Concatenated gzip members are one body (RFC 1952 §2.2).
                    if stream.pointee.avail_in == 0 { return .success(()) }
                    guard inflateReset(stream) == Z_OK else { return .failure(.malformedResponse("bad gzip body")) }
                    continue
                }
                if produced == 0, stream.pointee.avail_in == 0 { return .failure(.malformedResponse("truncated gzip body")) }
            }
        }
        try outcome.get()
        return output
    }
}
