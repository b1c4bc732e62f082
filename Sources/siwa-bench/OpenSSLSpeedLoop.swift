// The loop `openssl speed rsa2048` times for its verify figure (apps/speed.c: EVP_PKEY_verify of
// a 36-byte message with a context prepared once, no digest), run inside siwa-bench so that it
// can take turns with the verifier in batches of 200 on the same thread: `openssl speed` run as
// its own process meets the machine seconds apart, and on this shared machine its rounds moved
// by half against the verifier's.
import COpenSSL

/// One RSA-2048 key, a signature over 36 random bytes, and a prepared verify context.
final class OpenSSLSpeedLoop {
    private let key: OpaquePointer
    private let context: OpaquePointer
    private let message: [UInt8]
    private let signature: [UInt8]

    init() throws {
        var generated: OpaquePointer?
        let keygen = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nil)
        defer { EVP_PKEY_CTX_free(keygen) }
        guard let keygen, EVP_PKEY_keygen_init(keygen) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(keygen, 2048) == 1,
              EVP_PKEY_keygen(keygen, &generated) == 1, let key = generated
        else { throw AppleFixture.Failure("RSA key generation failed") }
        var prepared: OpaquePointer?
        // The key is this object's once the context is made; until then a failure frees it here.
        defer { if prepared == nil { EVP_PKEY_free(key) } }
        let message = (0..<36).map { _ in UInt8.random(in: 0...255) }
        let signer = EVP_PKEY_CTX_new(key, nil)
        defer { EVP_PKEY_CTX_free(signer) }
        var length = 0
        guard let signer, EVP_PKEY_sign_init(signer) == 1, EVP_PKEY_sign(signer, nil, &length, message, message.count) == 1 else {
            throw AppleFixture.Failure("RSA signing failed")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(signer, &signature, &length, message, message.count) == 1 else { throw AppleFixture.Failure("RSA signing failed") }
        guard let context = EVP_PKEY_CTX_new(key, nil) else { throw AppleFixture.Failure("preparing the verify context failed") }
        guard EVP_PKEY_verify_init(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            throw AppleFixture.Failure("preparing the verify context failed")
        }
        prepared = context
        self.key = key
        self.context = context
        self.message = message
        self.signature = Array(signature.prefix(length))
    }

    deinit {
        EVP_PKEY_CTX_free(context)
        EVP_PKEY_free(key)
    }

    func verify() -> Bool {
        EVP_PKEY_verify(context, signature, signature.count, message, message.count) == 1
    }
}
