import COpenSSL
import Synchronization

/// Verifies SHA-256 digests against one public key with contexts prepared once and reused.
/// OpenSSL 3's `EVP_DigestVerifyInit` looks the algorithm up in its providers on every call,
/// which doubled the cost of an RS256 check; a prepared `EVP_PKEY_CTX` skips all of that.
/// Contexts are not thread-safe, so each call borrows one from a small pool.
final class DigestVerifier: @unchecked Sendable {
    // `key` is immutable and outlives the pool (it is freed by its own owner after this).
    private let key: EVPKey
    /// A context owned by whoever holds this value: the pool, or one call at a time.
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let idle = Mutex<[Context]>([])
    private static let maxIdle = 16

    init(key: EVPKey) {
        self.key = key
    }

    deinit {
        idle.withLock { contexts in contexts.forEach { EVP_PKEY_CTX_free($0.pointer) } }
    }

    func verify(signature: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer) -> Bool {
        guard let context = idle.withLock({ $0.popLast() }) ?? makeContext() else { return false }
        let valid = EVP_PKEY_verify(
            context.pointer, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count,
            digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count) == 1
        if !valid { ERR_clear_error() }
        let kept = idle.withLock { contexts -> Bool in
            guard contexts.count < Self.maxIdle else { return false }
            contexts.append(context)
            return true
        }
        if !kept { EVP_PKEY_CTX_free(context.pointer) }
        return valid
    }

    private func makeContext() -> Context? {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return nil }
        guard EVP_PKEY_verify_init(context) == 1, EVP_PKEY_CTX_set_signature_md(context, Digests.sha256) == 1 else {
            EVP_PKEY_CTX_free(context)
            ERR_clear_error()
            return nil
        }
        return Context(pointer: context)
    }
}
