import COpenSSL
import Glibc

public enum SHA256 {
    public static let byteCount = 32

    public static func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { out, initialized in
            withContiguousBytes(data) { hash($0, into: UnsafeMutableRawBufferPointer(out)) }
            initialized = byteCount
        }
    }

    public static func hash(_ text: String) -> [UInt8] {
        var text = text
        return text.withUTF8 { hash($0) }
    }

    /// Into the caller's 32 bytes, through this thread's digest context: no allocation, for
    /// the session token hashed on every authenticated request.
    public static func hash(_ bytes: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count >= byteCount, "a SHA-256 digest needs 32 bytes")
        let context = ThreadDigestContext.current
        var length: UInt32 = 0
        let done = EVP_DigestInit_ex2(context, Digests.sha256, nil) == 1
            && EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1
            && EVP_DigestFinal_ex(context, digest.baseAddress?.assumingMemoryBound(to: UInt8.self), &length) == 1
        precondition(done && length == 32, "SHA-256 failed")
    }
}

/// One `EVP_MD_CTX` per thread, reused: `EVP_Digest` allocates and frees one on every call.
/// Freed when its thread ends.
enum ThreadDigestContext {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { context in EVP_MD_CTX_free(OpaquePointer(context)) }
        precondition(created == 0, "pthread_key_create failed")
        return key
    }()

    static var current: OpaquePointer {
        if let context = pthread_getspecific(key) { return OpaquePointer(context) }
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed") }
        pthread_setspecific(key, UnsafeRawPointer(context))
        return context
    }
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
