import COpenSSL

public enum SHA256 {
    public static let byteCount = 32

    public static func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let done: Int32 = withContiguousBytes(data) { bytes in
            digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(bytes.baseAddress, bytes.count, out.baseAddress, &length, Digests.sha256, nil)
            }
        }
        precondition(done == 1 && length == 32, "SHA-256 failed")
        return digest
    }

    public static func hash(_ text: String) -> [UInt8] { hash(Array(text.utf8)) }
}

/// Runs `body` over the bytes of any collection, copying only when it is not contiguous.
func withContiguousBytes<R>(_ data: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    if let result = try data.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
        return result
    }
    return try Array(data).withUnsafeBytes(body)
}

/// Message digests fetched once: `EVP_sha256()` on every call would repeat the provider lookup.
enum Digests {
    nonisolated(unsafe) static let sha256: OpaquePointer = {
        guard let digest = EVP_MD_fetch(nil, "SHA256", nil) else { fatalError("OpenSSL has no SHA-256") }
        return digest
    }()
}
