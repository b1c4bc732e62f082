import CZlib
import WireFormat

/// gzip for response bodies (docs/reference/http-api.md: bodies of 1 KiB or more, honouring `q=0`).
public enum Gzip {
    public static let minimumBodyBytes = 1024

    /// The gzip form of `bytes`, or nil if zlib fails (the caller then sends it uncompressed).
    public static func compress(_ bytes: [UInt8], level: Int32 = 5) -> [UInt8]? {
        var stream = z_stream()
        guard siwa_deflate_init_gzip(&stream, level) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count))) + 32
        var output = [UInt8](repeating: 0, count: bound)
        let result: Int32 = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END else { return nil }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    /// Inflates gzip or zlib data, refusing output over `limit` bytes (a compression bomb).
    public static func decompress(_ bytes: [UInt8], limit: Int) -> [UInt8]? {
        var stream = z_stream()
        guard siwa_inflate_init_auto(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        return bytes.withUnsafeBufferPointer { input -> [UInt8]? in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, out.count - Int(stream.avail_out))
                }
                guard status == Z_OK || status == Z_STREAM_END else { return nil }
                if output.count + produced > limit { return nil }
                output.append(contentsOf: chunk[0..<produced])
                if status == Z_STREAM_END { return output }
                if produced == 0 && stream.avail_in == 0 { return nil }
            }
        }
    }

    /// Whether an `Accept-Encoding` value allows gzip (RFC 9110 §12.5.3): an explicit `gzip`
    /// decides by its q-value; otherwise `*` does.
    public static func isAccepted(by acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else { return false }
        var explicit: Bool?
        var wildcard: Bool?
        for member in acceptEncoding.split(separator: ",") {
            let parts = member.split(separator: ";")
            guard let first = parts.first else { continue }
            let coding = first.trimmingHTTPWhitespace().lowercased()
            var allowed = true
            for parameter in parts.dropFirst() {
                let pair = parameter.trimmingHTTPWhitespace()
                if pair.lowercased().hasPrefix("q=") { allowed = qValueIsPositive(pair.dropFirst(2)) }
            }
            switch coding {
            case "gzip", "x-gzip": explicit = allowed
            case "*": wildcard = allowed
            default: break
            }
        }
        return explicit ?? wildcard ?? false
    }

    private static func qValueIsPositive(_ text: Substring) -> Bool {
        // q = 0, 0.0, 0.00, 0.000 mean "not acceptable"; anything else that parses is positive.
        let trimmed = text.trimmingHTTPWhitespace()
        guard let first = trimmed.first else { return false }
        if first == "1" { return true }
        guard first == "0" else { return false }
        return trimmed.dropFirst().contains { $0 >= "1" && $0 <= "9" }
    }

    /// Media types worth compressing: text and structured text.
    public static func isCompressible(contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.split(separator: ";").first.map { $0.trimmingHTTPWhitespace().lowercased() } ?? ""
        return type.hasPrefix("text/") || type == "application/json" || type == "application/javascript"
            || type == "application/xml" || type == "image/svg+xml" || type.hasSuffix("+json") || type.hasSuffix("+xml")
    }
}
